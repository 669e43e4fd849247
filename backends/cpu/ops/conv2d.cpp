// Conv2d as implicit GEMM per image and group: Y[Kg, P*Q] = W[Kg, Cg*R*S] x columns[Cg*R*S, P*Q].
// 1x1 stride-1 unpadded convolutions use the input itself as the column matrix; others build
// the columns for a block of output rows at a time into a bounded per-task buffer. Depthwise
// convolutions have too little reuse for a GEMM and get a direct loop.
#include <algorithm>
#include <optional>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/kernels/gemm_f32.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Floats in one task's column buffer (1 MiB), so memory stays bounded whatever the tensor size.
constexpr std::int64_t column_budget = 1 << 18;

struct ConvOperands {
  const ConvDims& d;
  const Conv2dParams& p;
  const float* x;
  const float* w;
  const float* bias;  // nullptr without a bias
  const F32Output& y;

  float bias_of(std::int64_t k) const { return bias ? bias[k] : 0.0f; }
};

// Fills col[(c * R + r) * S + s][(oh - oh0) * Q + ow] for output rows [oh0, oh0 + rows), reading
// the group's channels from x_group; positions in the padding read as zero.
void im2col(const ConvOperands& op, const float* x_group, std::int64_t oh0, std::int64_t rows,
            float* col) {
  const ConvDims& d = op.d;
  const auto [stride_h, stride_w] = op.p.stride;
  const auto [dil_h, dil_w] = op.p.dilation;
  const std::int64_t pad_top = op.p.pad[0], pad_left = op.p.pad[1];
  const std::int64_t cols = rows * d.q;
  for (std::int64_t c = 0; c < d.c_per_group; ++c) {
    for (std::int64_t r = 0; r < d.r; ++r) {
      for (std::int64_t s = 0; s < d.s; ++s) {
        float* dst = col + ((c * d.r + r) * d.s + s) * cols;
        for (std::int64_t row = 0; row < rows; ++row, dst += d.q) {
          const std::int64_t h = (oh0 + row) * stride_h - pad_top + r * dil_h;
          if (h < 0 || h >= d.h) {
            std::fill_n(dst, d.q, 0.0f);
            continue;
          }
          const float* x_row = x_group + (c * d.h + h) * d.w;
          for (std::int64_t ow = 0; ow < d.q; ++ow) {
            const std::int64_t iw = ow * stride_w - pad_left + s * dil_w;
            dst[ow] = iw >= 0 && iw < d.w ? x_row[iw] : 0.0f;
          }
        }
      }
    }
  }
}

void conv_as_gemm(const ConvOperands& op) {
  const ConvDims& d = op.d;
  const Conv2dParams& p = op.p;
  const bool pointwise = d.r == 1 && d.s == 1 && p.stride[0] == 1 && p.stride[1] == 1 &&
                         std::ranges::all_of(p.pad, [](std::int64_t v) { return v == 0; });
  const std::int64_t depth = d.c_per_group * d.r * d.s;
  const std::int64_t plane = d.p * d.q;
  const std::int64_t block_rows =
      pointwise ? d.p : std::clamp(column_budget / (depth * d.q), std::int64_t{1}, d.p);
  const std::int64_t blocks = (d.p + block_rows - 1) / block_rows;
  const auto tasks = tbb::blocked_range<std::int64_t>(0, d.n * d.groups * blocks);
  tbb::parallel_for(tasks, [&](const tbb::blocked_range<std::int64_t>& range) {
    std::vector<float> col(pointwise ? 0 : depth * block_rows * d.q);
    for (std::int64_t task = range.begin(); task != range.end(); ++task) {
      const std::int64_t image = task / (d.groups * blocks);
      const std::int64_t group = task / blocks % d.groups;
      const std::int64_t oh0 = task % blocks * block_rows;
      const std::int64_t rows = std::min(block_rows, d.p - oh0);
      const float* x_group = op.x + (image * d.c + group * d.c_per_group) * d.h * d.w;
      const float* columns = x_group + oh0 * d.q;  // pointwise: the input is [Cg, H * W]
      std::int64_t ld_columns = plane;
      if (!pointwise) {
        im2col(op, x_group, oh0, rows, col.data());
        columns = col.data();
        ld_columns = rows * d.q;
      }
      const std::int64_t first_filter = group * d.k_per_group;
      const std::int64_t y_offset = (image * d.k + first_filter) * plane + oh0 * d.q;
      float* y_block = op.y.data() + y_offset;
      gemm_f32(d.k_per_group, rows * d.q, depth, op.w + first_filter * depth, depth, false,
               columns, ld_columns, false, y_block, plane, [&](const GemmTile& t) {
                 for (std::int64_t i = t.row; i < t.row + t.rows; ++i) {
                   const float b = op.bias_of(first_filter + i);
                   float* y_row = y_block + i * plane;
                   for (std::int64_t j = t.col; j < t.col + t.cols; ++j) {
                     y_row[j] = activate(p.activation, y_row[j] + b);
                   }
                   op.y.commit(y_offset + i * plane + t.col, t.cols);
                 }
               });
    }
  });
}

// groups == C == K: output plane (n, k) reads only input plane (n, k) and filter k.
void depthwise(const ConvOperands& op) {
  const ConvDims& d = op.d;
  const auto [stride_h, stride_w] = op.p.stride;
  const auto [dil_h, dil_w] = op.p.dilation;
  const std::int64_t pad_top = op.p.pad[0], pad_left = op.p.pad[1];
  const auto output_rows = tbb::blocked_range<std::int64_t>(0, d.n * d.k * d.p);
  tbb::parallel_for(output_rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      const std::int64_t plane = row / d.p, oh = row % d.p, k = plane % d.k;
      const float* x_plane = op.x + plane * d.h * d.w;
      const float* filter = op.w + k * d.r * d.s;
      float* y_row = op.y.data() + row * d.q;
      for (std::int64_t ow = 0; ow < d.q; ++ow) {
        float sum = 0.0f;
        for (std::int64_t r = 0; r < d.r; ++r) {
          const std::int64_t h = oh * stride_h - pad_top + r * dil_h;
          if (h < 0 || h >= d.h) continue;
          for (std::int64_t s = 0; s < d.s; ++s) {
            const std::int64_t iw = ow * stride_w - pad_left + s * dil_w;
            if (iw >= 0 && iw < d.w) sum += x_plane[h * d.w + iw] * filter[r * d.s + s];
          }
        }
        y_row[ow] = activate(op.p.activation, sum + op.bias_of(k));
      }
      op.y.commit(row * d.q, d.q);
    }
  });
}

}  // namespace

void cpu_conv2d(const HostOpArgs& args) {
  const auto& p = std::get<Conv2dParams>(args.node.params);
  const ConvDims d = conv_dims(args.inputs[0].shape(), args.inputs[1].shape(), p);
  if (args.output.numel() == 0) return;
  const F32Input x(args.inputs[0]);
  const F32Input w(args.inputs[1]);
  std::optional<F32Input> bias;
  if (args.inputs.size() == 3) bias.emplace(args.inputs[2]);
  const F32Output y(args.output);
  const ConvOperands op{.d = d, .p = p, .x = x.data(), .w = w.data(),
                        .bias = bias ? bias->data() : nullptr, .y = y};
  if (d.groups == d.c && d.groups == d.k) {
    depthwise(op);
  } else {
    conv_as_gemm(op);
  }
}

}  // namespace porta::detail
