#pragma once
// The CPU kernels bound by arithmetic besides the GEMM micro-kernels. Each is written once, as an
// always-inline body in its own header, and compiled once per instruction set by
// vector_kernels.inc, with a target attribute rather than -march, so that one binary runs well
// on any x86-64 CPU: the baseline build's SSE code ran SiLU nine times slower than AVX-512 on
// Zen 5. CPUID picks the set at run time, following the GEMM micro-kernel's choice.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/cpu/kernels/activation_run.hpp"
#include "backends/cpu/kernels/attention_tile.hpp"
#include "backends/cpu/kernels/depthwise_plane.hpp"
#include "backends/cpu/kernels/depthwise_rows.hpp"
#include "backends/cpu/kernels/depthwise_filter_gradient.hpp"
#include "backends/cpu/kernels/dot_tile.hpp"
#include "backends/cpu/kernels/epilogue.hpp"
#include "backends/cpu/kernels/f16_run.hpp"
#include "backends/cpu/kernels/gemv_rows.hpp"
#include "backends/cpu/kernels/pack_panel.hpp"
#include "backends/cpu/kernels/winograd_transform.hpp"

namespace porta::detail {

// A band of stride 1, dilation 1 and 3 or 5 taps across, its chunks of channels block by block
// (depthwise_pixel_major_body), over a multiple of `channels`. Defined per set by
// depthwise_pixel_major.inc; `run` is null where the set has none.
struct PixelMajorKernel {
  DepthwiseRowsFn run = nullptr;
  std::int64_t channels = 0;
  bool in_cache = false;  // whether it also runs bands in cache; else only bands that stream
};

struct VectorKernels {
  // Either runs any band; bands of stride 2 run faster through the second (depthwise_rows_body).
  DepthwiseRowsFn depthwise_rows, depthwise_rows_stride2;
  bool depthwise_row_pairs;  // whether depthwise_rows_stride2 runs rows in pairs where asked
  PixelMajorKernel depthwise_pixel_major{};
  // A band of stride 2 that streams, over channels in whole vectors; null where the set has none
  // (all but AVX-512: depthwise_stride2_streamed_avx512.cpp).
  DepthwiseRowsFn depthwise_rows_stride2_streamed = nullptr;
  DepthwisePlaneFn depthwise_plane;
  FilterGradientRowFn filter_gradient_row;
  ActivationRunFn sigmoid, silu, tanh, gelu, gelu_tanh, erf;
  BiasActivateChannelsFn bias_activate_channels;
  BiasActivatePixelsFn bias_activate_pixels;
  WinogradInputFn winograd_input;
  WinogradOutputFn winograd_output;
  WidenF16Fn widen_f16;
  NarrowF16Fn narrow_f16;
  DotTileFn dot_tile;
  GemvRowsFn gemv_rows;
  DealRunsFn deal_runs;
  PackRowsFn pack_rows;
  // The FMA probe's loop: `steps` steps of multiply_adds_per_step independent acc = acc * scale +
  // shift, on registers; returns the sum of the results.
  float (*multiply_add_chains)(std::int64_t steps, float scale, float shift);
  int multiply_adds_per_step;
  AttentionPanelFn attention_panel;
  AttentionSoftmaxFn attention_softmax;
};

extern const PixelMajorKernel avx512_depthwise_pixel_major, avx2_depthwise_pixel_major;
void avx512_depthwise_rows_stride2_streamed(const DepthwiseRows& band, float* y);

VectorKernels avx512_vector_kernels();
VectorKernels avx2_vector_kernels();
VectorKernels generic_vector_kernels();

// The set of `isa`, made once: of a set this build has (isa_built), else the generic set.
const VectorKernels& vector_kernels_for(std::string_view isa);
// The set for the instruction set of gemm_micro_kernel() (which PORTA_CPU_ISA caps), chosen once.
const VectorKernels& vector_kernels();
// Every set this build has and this CPU runs (isa_runs), named by its instruction set: for tests.
std::vector<std::pair<std::string_view, VectorKernels>> runnable_vector_kernels();

}  // namespace porta::detail
