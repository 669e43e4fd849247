// The rules of the depthwise plan, each with the reason in a line; the measurements behind them
// are in README.md beside this file, under the rule's name.
#include "backends/cpu/plans/depthwise_plan.hpp"

#include <algorithm>

#include "backends/cpu/kernels/vector_kernels.hpp"

namespace porta::detail {
namespace {

constexpr std::int64_t f32_bytes = sizeof(float);

// Where input and output stream from memory (README.md, `depthwise_streams`): beyond half of L3
// on one thread, two thirds on more.
bool streams_of(const ConvDims& d, const Machine& machine) {
  const std::int64_t row_bytes = d.w * d.c * f32_bytes, out_row_bytes = d.q * d.k * f32_bytes;
  const std::int64_t bytes = d.n * (d.h * row_bytes + d.p * out_row_bytes);
  return bytes > (machine.threads == 1 ? machine.cache.l3 / 2 : machine.cache.l3 / 3 * 2);
}

// Output rows a band: layers that stream one (3x3 /2 ones a pair, `row_pairs`), others as many
// as fill half of L2 with their input and output rows (README.md, `band_rows`).
std::int64_t band_rows_of(const ConvDims& d, const Conv2dParams& p, const DepthwisePlan& plan,
                          const CacheSizes& cache) {
  if (plan.streams) return plan.row_pairs ? 2 : 1;
  const std::int64_t stride_h = p.stride[0], span_h = (d.r - 1) * p.dilation[0] + 1;
  const std::int64_t row_bytes = d.w * d.c * f32_bytes, out_row_bytes = d.q * d.k * f32_bytes;
  const std::int64_t fitting =
      (cache.l2 / 2 - (span_h - stride_h) * row_bytes) / (stride_h * row_bytes + out_row_bytes);
  return std::clamp<std::int64_t>(fitting, 1, d.p);
}

// Whether bands of filters 3 or 5 wide, at stride 1 and dilation 1 across, run pixel-major
// (README.md, `pixel_major`): where the set's kernel runs bands in cache, all 5 wide, 3 wide of up
// to 32 channels, or whose block fits half of L1, or that stream; where it runs only bands that
// stream, those of more than 64 channels or with an epilogue to fold in.
bool pixel_major_of(const ConvDims& d, const Conv2dParams& p, const PixelMajorKernel& by_pixels, bool streams,
                    bool can_stream, bool has_epilogue, const CacheSizes& cache) {
  const bool fits = by_pixels.run && d.k % by_pixels.channels == 0 && p.stride[1] == 1 && p.dilation[1] == 1 &&
                    (d.s == 3 || d.s == 5);
  if (!fits) return false;
  const bool block_in_l1 = d.r * (4 + 2) * d.k * f32_bytes <= cache.l1 / 2;
  if (by_pixels.in_cache) return can_stream || d.s == 5 || d.k <= 32 || (!streams && block_in_l1);
  return can_stream && (d.k > 64 || has_epilogue);
}

// At least 4 tasks a thread to balance: bands split into groups of 64 channels, or into more
// bands where too few channels remain.
void cut(DepthwisePlan& plan, const ConvDims& d, std::int64_t band_rows, std::int64_t threads) {
  const std::int64_t chunks = ceil_div(d.k, 64), min_tasks = threads == 1 ? 1 : 4 * threads;
  std::int64_t bands = ceil_div(d.p, band_rows);
  if (d.n * bands * chunks < min_tasks) bands = std::min(d.p, ceil_div(min_tasks, d.n * chunks));
  plan.rows_per_band = ceil_div(d.p, bands);
  plan.bands = ceil_div(d.p, plan.rows_per_band);
  plan.chunks_per_group = ceil_div(chunks, std::clamp<std::int64_t>(ceil_div(min_tasks, d.n * plan.bands), 1, chunks));
  plan.groups = ceil_div(chunks, plan.chunks_per_group);
}

const char* name(DepthwiseSweep sweep) {
  switch (sweep) {
    case DepthwiseSweep::rows: return "rows";
    case DepthwiseSweep::rows_stride2: return "rows_stride2";
    case DepthwiseSweep::rows_stride2_streamed: return "rows_stride2_streamed";
    case DepthwiseSweep::pixel_major: return "pixel_major";
  }
  return "?";
}

}  // namespace

DepthwisePlan plan_depthwise(const ConvDims& d, const Conv2dParams& p, const DepthwiseOperands& operands,
                             const Machine& machine) {
  const VectorKernels& vk = vector_kernels_for(machine.isa);
  const Activation act = p.activation;
  DepthwisePlan plan;
  plan.streams = streams_of(d, machine);
  // Pairs of rows where the set's stride-2 kernel runs them (README.md, `row_pairs`).
  plan.row_pairs = plan.streams && vk.depthwise_row_pairs && d.r == 3 && d.s == 3 && p.stride[0] == 2 &&
                   p.stride[1] == 2 && p.dilation[0] == 1 && p.dilation[1] == 1;
  const std::int64_t band_rows = band_rows_of(d, p, plan, machine.cache);
  // Bands that stream may write y past the caches where it is f32, aligned, and the activation a
  // cheap one (README.md, `can_stream`).
  const bool cheap_act = act == Activation::None || act == Activation::Relu || act == Activation::Relu6;
  const bool can_stream = plan.streams && cheap_act && !operands.y_converts && operands.y_aligned;
  const bool has_epilogue = operands.bias || operands.residual || act != Activation::None;
  const bool pixel_major = pixel_major_of(d, p, vk.depthwise_pixel_major, plan.streams, can_stream, has_epilogue,
                                          machine.cache);
  // Streaming stride-2 bands that are not pairs stream chunk by chunk where the set has such a
  // kernel, over channels in whole vectors (README.md, `stride2_streamed`).
  const bool stream_chunks = can_stream && vk.depthwise_rows_stride2_streamed && p.stride[1] == 2 &&
                             !plan.row_pairs && d.k % 16 == 0;
  const bool stream = (pixel_major && can_stream) || stream_chunks;
  // The others finish their sums in registers where the epilogue is a cheap one, but for pairs of
  // rows, which store their sums (README.md, `finish_in_registers`).
  const bool in_registers = cheap_act && has_epilogue && !plan.row_pairs;
  plan.finish = stream         ? DepthwiseFinish::streamed
                : in_registers ? DepthwiseFinish::in_registers
                               : DepthwiseFinish::after;
  plan.sweep = pixel_major     ? DepthwiseSweep::pixel_major
               : stream_chunks ? DepthwiseSweep::rows_stride2_streamed
               : p.stride[1] == 2 ? DepthwiseSweep::rows_stride2
                                  : DepthwiseSweep::rows;
  cut(plan, d, band_rows, machine.threads);
  // A task that is a whole band with a vector chunk to run fetches the next band's rows (README.md,
  // `fetch_next`).
  plan.fetch_next = plan.streams && plan.groups == 1 && d.k >= 16;
  // Sigmoid, SiLU, tanh and GELU, bound by arithmetic, run in the kernel on each row as soon as it is
  // computed (README.md, `kernel_epilogue`); the cheap epilogues in one pass over the band, unless the
  // kernel finishes its sums in registers.
  plan.kernel_epilogue = act == Activation::Sigmoid || act == Activation::Silu || act == Activation::Tanh ||
                         act == Activation::Gelu || plan.finish != DepthwiseFinish::after;
  return plan;
}

std::string describe(const DepthwisePlan& plan) {
  std::string line = std::string("conv depthwise sweep=") + name(plan.sweep) +
                     " bands=" + std::to_string(plan.bands) + "x" + std::to_string(plan.rows_per_band) +
                     " groups=" + std::to_string(plan.groups);
  if (plan.row_pairs) line += " row_pairs";
  if (plan.finish == DepthwiseFinish::streamed) line += " stream";
  if (plan.finish == DepthwiseFinish::in_registers) line += " finish_in_registers";
  return line;
}

}  // namespace porta::detail
