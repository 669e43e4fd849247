#pragma once
// The neutral GPU API emulated on the CPU, for the tests only (PORTA_GPU_EMULATION): the kernels
// and the runtime of backends/gpu compile with the host compiler and run, so that their indexing,
// tiling, block reductions and graph capture are checked against the reference in CI, where no GPU
// is. A launch runs its blocks one after another, each thread of a block as a
// fiber; shared memory is a static, as one block runs at a time. Streams run
// work at once, or record it while capturing; graphs replay what was recorded.
#include <math.h>  // expf and friends in the global namespace, as device code calls them

#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "backends/gpu/plan/capabilities.hpp"
#include "porta/dtype.hpp"

#define PORTA_GPU_NAMESPACE gpu_emulated
#define PORTA_GPU_BACKEND_NAME "gpu-emulated"
#define PORTA_GPU_VENDOR_NAME "porta (CPU emulation)"
#define PORTA_GPU_VENDOR_LIBRARIES "vendor libraries"

#define __global__
#define __device__
#define __launch_bounds__(threads)
#define __shared__ static
#define __align__(bytes) __attribute__((aligned(bytes)))

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};

inline dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
inline float __uint_as_float(unsigned u) { return std::bit_cast<float>(u); }
inline unsigned __float_as_uint(float f) { return std::bit_cast<unsigned>(f); }
#define gpu_half_bits_to_float(bits) porta::f16_to_f32(bits)
#define gpu_float_to_half_bits(value) porta::f32_to_f16(value)

enum gpuError_t { gpuSuccess = 0, gpuErrorMemoryAllocation = 2, gpuErrorInsufficientDriver = 35, gpuErrorNoDevice = 100 };
inline const char* gpuGetErrorName(gpuError_t e) {
  return e == gpuSuccess ? "gpuSuccess" : e == gpuErrorMemoryAllocation ? "gpuErrorMemoryAllocation" : "gpuError";
}
inline const char* gpuGetErrorString(gpuError_t e) { return e == gpuErrorMemoryAllocation ? "out of memory" : "emulated"; }
inline gpuError_t gpuGetLastError() { return gpuSuccess; }

// One small device with wave64, so that the tests see a warp size other than 32, and a tiny grid, so
// that every kernel's grid-stride loops run.
inline constexpr std::size_t emulated_memory = std::size_t{1} << 30;
struct gpuDeviceProp_t {
  char name[64] = "CPU emulation of the GPU API";
  std::size_t totalGlobalMem = emulated_memory;
  int multiProcessorCount = 1, warpSize = 64, maxThreadsPerBlock = 256;
  std::size_t sharedMemPerBlock = 48 * 1024;
  int maxGridSize[3] = {4, 2, 2};
};
inline gpuError_t gpuGetDeviceCount(int* count) { return *count = 1, gpuSuccess; }
inline gpuError_t gpuGetDeviceProperties(gpuDeviceProp_t* prop, int) { return *prop = {}, gpuSuccess; }
inline gpuError_t gpuSetDevice(int) { return gpuSuccess; }
inline gpuError_t gpuDriverGetVersion(int* v) { return *v = 0, gpuSuccess; }
inline gpuError_t gpuRuntimeGetVersion(int* v) { return *v = 0, gpuSuccess; }
inline gpuError_t gpuMemGetInfo(std::size_t* free, std::size_t* total) {
  *free = *total = emulated_memory;
  return gpuSuccess;
}
inline porta::detail::gpu::Capabilities gpu_capabilities(const gpuDeviceProp_t&) { return {.arch = "emulated"}; }
// The matrix-unit GEMM tile runs here (emulated at the end of this file), tf32 included, so that the
// tests check it.
inline bool gpu_runs_mma(const porta::detail::gpu::Capabilities&) { return true; }
inline bool gpu_runs_tf32(const porta::detail::gpu::Capabilities&) { return true; }

// Larger than the emulated memory fails, so the out-of-memory path is tested too.
inline gpuError_t gpuMalloc(void** p, std::size_t bytes) {
  *p = bytes > emulated_memory ? nullptr : std::malloc(bytes);
  return *p == nullptr ? gpuErrorMemoryAllocation : gpuSuccess;
}
inline gpuError_t gpuFree(void* p) { return std::free(p), gpuSuccess; }

// Handles are heap objects owned by the caller's RAII wrappers, as a driver's are.
struct EmulatedStream {
  bool capturing = false;
  std::vector<std::function<void()>> recorded;
};
struct EmulatedGraph {
  std::vector<std::function<void()>> work;
};
struct EmulatedEvent {
  std::chrono::steady_clock::time_point time;
};
using gpuStream_t = EmulatedStream*;
using gpuGraph_t = EmulatedGraph*;
using gpuGraphExec_t = EmulatedGraph*;
using gpuEvent_t = EmulatedEvent*;

inline void emulated_enqueue(gpuStream_t stream, std::function<void()> work) {
  if (stream->capturing)
    stream->recorded.push_back(std::move(work));
  else
    work();
}

enum gpuMemcpyKind { gpuMemcpyHostToDevice, gpuMemcpyDeviceToHost, gpuMemcpyDeviceToDevice };
inline gpuError_t gpuMemcpyAsync(void* dst, const void* src, std::size_t bytes, gpuMemcpyKind, gpuStream_t stream) {
  emulated_enqueue(stream, [=] { std::memmove(dst, src, bytes); });
  return gpuSuccess;
}
inline gpuError_t gpuMemcpy2DAsync(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                                   std::size_t width, std::size_t height, gpuMemcpyKind, gpuStream_t stream) {
  emulated_enqueue(stream, [=] {
    for (std::size_t row = 0; row < height; ++row)
      std::memcpy(static_cast<char*>(dst) + row * dst_pitch, static_cast<const char*>(src) + row * src_pitch, width);
  });
  return gpuSuccess;
}
inline gpuError_t gpuMemsetAsync(void* p, int value, std::size_t bytes, gpuStream_t stream) {
  emulated_enqueue(stream, [=] { std::memset(p, value, bytes); });
  return gpuSuccess;
}

inline constexpr unsigned gpuStreamNonBlocking = 1;
inline gpuError_t gpuStreamCreateWithFlags(gpuStream_t* s, unsigned) { return *s = new EmulatedStream, gpuSuccess; }
inline gpuError_t gpuStreamDestroy(gpuStream_t s) { return delete s, gpuSuccess; }
inline gpuError_t gpuStreamSynchronize(gpuStream_t) { return gpuSuccess; }

inline gpuError_t gpuEventCreate(gpuEvent_t* e) { return *e = new EmulatedEvent, gpuSuccess; }
inline gpuError_t gpuEventDestroy(gpuEvent_t e) { return delete e, gpuSuccess; }
inline gpuError_t gpuEventRecord(gpuEvent_t e, gpuStream_t stream) {
  emulated_enqueue(stream, [e] { e->time = std::chrono::steady_clock::now(); });
  return gpuSuccess;
}
inline gpuError_t gpuEventElapsedTime(float* ms, gpuEvent_t start, gpuEvent_t end) {
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return gpuSuccess;
}

enum gpuStreamCaptureMode { gpuStreamCaptureModeThreadLocal };
inline gpuError_t gpuStreamBeginCapture(gpuStream_t s, gpuStreamCaptureMode) {
  s->capturing = true;
  s->recorded.clear();
  return gpuSuccess;
}
inline gpuError_t gpuStreamEndCapture(gpuStream_t s, gpuGraph_t* graph) {
  s->capturing = false;
  *graph = new EmulatedGraph{std::move(s->recorded)};
  return gpuSuccess;
}
inline gpuError_t gpu_graph_instantiate(gpuGraphExec_t* exec, gpuGraph_t graph) {
  return *exec = new EmulatedGraph{graph->work}, gpuSuccess;
}
inline gpuError_t gpuGraphLaunch(gpuGraphExec_t exec, gpuStream_t stream) {
  for (const auto& work : exec->work) emulated_enqueue(stream, work);
  return gpuSuccess;
}
inline gpuError_t gpuGraphDestroy(gpuGraph_t g) { return delete g, gpuSuccess; }
inline gpuError_t gpuGraphExecDestroy(gpuGraphExec_t g) { return delete g, gpuSuccess; }

// The threads of one block run as fibers on the launching thread: each runs until its next
// __syncthreads, then the next one runs, so that a round over all fibers is one barrier phase.
// (The kernels reach every __syncthreads uniformly, as CUDA and HIP require.) Far cheaper than OS
// threads, whose start-up and futex barriers would dominate the tests. The switch is
// emulation_fiber.cpp's, which makes no system call.
extern "C" void porta_emulated_fiber_switch(void** save, void* load);
extern "C" void porta_emulated_fiber_start();

class EmulatedBlock {
 public:
  static constexpr unsigned max_threads = 256;  // the emulated device's maxThreadsPerBlock

  static EmulatedBlock& instance() {
    static EmulatedBlock block;
    return block;
  }

  // Runs body() as `threads` fibers, setting threadIdx before each switch to a fiber.
  void run(dim3 block, const std::function<void()>& body) {
    const unsigned threads = block.x * block.y * block.z;
    body_ = &body;
    for (unsigned t = 0; t < threads; ++t) fibers_[t].done = false;
    for (unsigned finished = 0; finished < threads;) {
      finished = 0;
      for (unsigned t = 0; t < threads; ++t) {
        if (fibers_[t].done) {
          ++finished;
          continue;
        }
        current_ = t;
        threadIdx = dim3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
        porta_emulated_fiber_switch(&scheduler_, fibers_[t].resume);
      }
    }
  }

  void sync() { porta_emulated_fiber_switch(&fibers_[current_].resume, scheduler_); }

 private:
  struct Fiber {
    std::vector<char> stack = std::vector<char>(std::size_t{256} << 10);
    void* resume = nullptr;  // the top of its stack, as the last switch away from it left it
    bool done = false;
  };

  EmulatedBlock() {
    for (Fiber& f : fibers_) f.resume = new_fiber(f.stack);
  }

  // The frame a switch pops, on top of a fresh stack: the FP control words at their defaults
  // (MXCSR 0x1f80, x87 0x037f: a fiber keeps its own, so a mode the host thread sets does not reach
  // the kernels), r15, r14, r13 = fiber_main, r12 = this, its argument, rbx, rbp = 0 (where backtraces
  // end), and the return into porta_emulated_fiber_start, 16-byte aligned above it so that fiber_main
  // is entered as the ABI requires.
  void* new_fiber(std::vector<char>& stack) {
    const auto top = reinterpret_cast<std::uintptr_t>(stack.data() + stack.size()) & ~std::uintptr_t{15};
    void** frame = reinterpret_cast<void**>(top) - 8;
    frame[0] = reinterpret_cast<void*>(std::uintptr_t{0x037f} << 32 | 0x1f80);
    frame[1] = frame[2] = frame[5] = frame[6] = nullptr;
    frame[3] = reinterpret_cast<void*>(&EmulatedBlock::fiber_main);
    frame[4] = this;
    frame[7] = reinterpret_cast<void*>(&porta_emulated_fiber_start);
    return frame;
  }

  // A fiber is made once and runs its thread of every block: after body() returns it switches out,
  // and the next block's run resumes it here.
  static void fiber_main(EmulatedBlock* self) {
    for (;;) {
      (*self->body_)();
      Fiber& f = self->fibers_[self->current_];
      f.done = true;
      porta_emulated_fiber_switch(&f.resume, self->scheduler_);
    }
  }

  std::vector<Fiber> fibers_ = std::vector<Fiber>(max_threads);
  void* scheduler_ = nullptr;
  const std::function<void()>* body_ = nullptr;
  unsigned current_ = 0;
};

inline void __syncthreads() { EmulatedBlock::instance().sync(); }

// Atomic as it stands: the fibers of a block switch only at __syncthreads, and blocks run in turn.
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long compare, unsigned long long value) {
  const unsigned long long old = *p;
  if (old == compare) *p = value;
  return old;
}

template <class Args>
void gpu_launch(void (*kernel)(Args), dim3 grid, dim3 block, gpuStream_t stream, const Args& args) {
  emulated_enqueue(stream, [=] {
    gridDim = grid;
    blockDim = block;
    const std::function<void()> body = [&] { kernel(args); };
    for (unsigned z = 0; z < grid.z; ++z)
      for (unsigned y = 0; y < grid.y; ++y)
        for (unsigned x = 0; x < grid.x; ++x) {
          blockIdx = dim3(x, y, z);
          EmulatedBlock::instance().run(block, body);
        }
  });
}

// Matrix units, with the gpu_mma_* names of compat/cuda.hpp: the first lane of each 32-lane warp
// does the warp's whole 16x16xK step and holds the tiles; the other lanes' calls do nothing, since
// the warp-collective operations are one call here. Checks the matrix-unit GEMM's tiling and
// indexing, and the operands' precision: f16 and bf16 are exact in f32, and of an f32 operand
// (tf32) only the 10 leading mantissa bits are read, as NVIDIA's tensor cores do. The products
// accumulate in f32 in order, which the hardware need not.
#define PORTA_GPU_MMA_TF32 1
inline constexpr int gpu_mma_warp = 32;
template <porta::DType T> inline constexpr int gpu_mma_k = T == porta::DType::f32 ? 8 : 16;
struct EmulatedMatrixTile {
  float v[16][16] = {};
};
template <porta::DType T> using gpu_mma_a = EmulatedMatrixTile;
template <porta::DType T> using gpu_mma_b = EmulatedMatrixTile;
template <porta::DType T> using gpu_mma_accumulator = EmulatedMatrixTile;

inline bool emulated_mma_lane() { return threadIdx.x % gpu_mma_warp == 0; }
template <porta::DType T> float emulated_mma_operand(float value) {
  return std::bit_cast<float>(std::bit_cast<unsigned>(value) & 0xffffe000u);  // tf32: 10 mantissa bits
}
template <porta::DType T> float emulated_mma_operand(unsigned short bits) {
  return T == porta::DType::f16 ? porta::f16_to_f32(bits) : porta::bf16_to_f32(bits);
}
template <porta::DType T> void gpu_mma_zero(gpu_mma_accumulator<T>& c) { c = {}; }
// A is 16 x K, B is K x 16, both row-major at p with leading dimension ld.
template <porta::DType T, class S> void gpu_mma_load_a(gpu_mma_a<T>& a, const S* p, int ld) {
  if (!emulated_mma_lane()) return;
  for (int i = 0; i < 16; ++i)
    for (int l = 0; l < gpu_mma_k<T>; ++l) a.v[i][l] = emulated_mma_operand<T>(p[i * ld + l]);
}
template <porta::DType T, class S> void gpu_mma_load_b(gpu_mma_b<T>& b, const S* p, int ld) {
  if (!emulated_mma_lane()) return;
  for (int l = 0; l < gpu_mma_k<T>; ++l)
    for (int j = 0; j < 16; ++j) b.v[l][j] = emulated_mma_operand<T>(p[l * ld + j]);
}
template <porta::DType T> void gpu_mma(gpu_mma_accumulator<T>& c, const gpu_mma_a<T>& a, const gpu_mma_b<T>& b) {
  if (!emulated_mma_lane()) return;
  for (int i = 0; i < 16; ++i)
    for (int l = 0; l < gpu_mma_k<T>; ++l)
      for (int j = 0; j < 16; ++j) c.v[i][j] += a.v[i][l] * b.v[l][j];
}
template <porta::DType T> void gpu_mma_store(float* p, int ld, const gpu_mma_accumulator<T>& c) {
  if (!emulated_mma_lane()) return;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) p[i * ld + j] = c.v[i][j];
}
// A block barrier is a warp barrier too; the kernels reach it uniformly.
inline void gpu_sync_warp() { __syncthreads(); }
