#pragma once
// oneDNN's backward primitives, the `backward` suite's vendor rows (backward.hpp).
//
// porta-bench's own code never links oneDNN. Where the cpu backend found it, the oneDNN calls live
// in a module, lib/porta/libporta-bench-onednn.so (bench/onednn/onednn_call.cpp), loaded on the first
// vendor row (onednn_backward.cpp), so that a module build's porta-bench starts without oneDNN (in a
// build without modules, libporta's cpu backend links it anyway). The module is given plain values,
// no porta types, so it needs nothing of porta's but the same C++ ABI: bench_module.hpp's handshake.
#include <cstddef>
#include <cstdint>
#include <string>

namespace porta::bench {

// One gradient of a conv2d or a GEMM. The inputs are read in place and the gradient written to
// `out`, all porta-bench's buffers, which outlive the call made of them.
struct OnednnProblem {
  enum class Op { Conv2d, Gemm };
  // y [n, k, p, q] = conv2d(x [n, c, h, w], w [k, c / groups, r, s]); x and y NHWC or NCHW.
  struct Conv {
    std::int64_t n, c, h, w, k, r, s, p, q, groups;
    std::int64_t stride[2], dilation[2], pad[4];  // dilation 1: dense; pad: top, left, bottom, right
    bool nhwc;
    const float *x, *weights, *dy;  // the data gradient reads weights and dy, the filter gradient x and dy
  };
  // c [m, n] = a [m, k] · b, b [k, n] or, transposed, [n, k].
  struct Gemm {
    std::int64_t m, n, k;
    bool trans_b;
    const float *a, *b, *dc;  // dA reads dc and b, dB a and dc
  };

  Op op;
  bool data;    // the data gradient: dx, dA; else the filter's, dw, dB
  int threads;  // the cpu device's: oneDNN's OpenMP team
  Conv conv;    // op Conv2d
  Gemm gemm;    // op Gemm
  float* out;
};

// oneDNN's primitives for one problem, made once, run for each sample.
class OnednnCall {
 public:
  virtual ~OnednnCall() = default;
  // The implementation oneDNN chose, the row's algo: "onednn convolution_backward_data brg:avx512_core".
  virtual std::string algo() const = 0;
  // One run into the problem's `out`; empty, or oneDNN's error.
  virtual std::string run() = 0;
};

}  // namespace porta::bench

// The module's one entry point: the call for `problem`; or null with the error in `error`, and
// *unimplemented true where it is oneDNN's "no primitive for this case on this CPU" (any other
// failure: false).
extern "C" porta::bench::OnednnCall* porta_bench_onednn_prepare(const porta::bench::OnednnProblem* problem,
                                                                 char* error, std::size_t error_size,
                                                                 bool* unimplemented);
