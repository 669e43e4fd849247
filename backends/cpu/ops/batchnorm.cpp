#include <algorithm>
#include <cmath>
#include <variant>
#include <vector>

#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void cpu_batchnorm(const HostOpArgs& args) {
  const double epsilon = std::get<BatchNormParams>(args.node.params).epsilon;
  const HostTensor& x = args.inputs[0];
  const HostTensor& y = args.output;
  const AxisSplit split = split_at_axis(x.shape(), 1);

  // Per channel y = (x - mean) * factor + bias, with factor = scale / sqrt(var + epsilon).
  std::vector<float> mean(split.axis), factor(split.axis), bias(split.axis);
  for (std::int64_t c = 0; c < split.axis; ++c) {
    mean[c] = args.inputs[3].load(c);
    factor[c] = static_cast<float>(args.inputs[1].load(c) /
                                   std::sqrt(double{args.inputs[4].load(c)} + epsilon));
    bias[c] = args.inputs[2].load(c);
  }

  // Planes are (outer, channel) pairs; long planes are split into chunks to spread the work.
  const std::int64_t planes = split.outer * split.axis;
  const std::int64_t chunks = ceil_div(split.inner, chunk_elements);
  const auto work = tbb::blocked_range2d<std::int64_t>(0, planes, 0, chunks);
  tbb::parallel_for(work, [&](const tbb::blocked_range2d<std::int64_t>& range) {
    ChunkBuffer x_buffer, y_buffer;
    for (std::int64_t plane = range.rows().begin(); plane != range.rows().end(); ++plane) {
      const std::int64_t c = plane % split.axis;
      const float m = mean[c], f = factor[c], b = bias[c];
      for (std::int64_t chunk = range.cols().begin(); chunk != range.cols().end(); ++chunk) {
        const std::int64_t begin = plane * split.inner + chunk * chunk_elements;
        const std::int64_t count = std::min(chunk_elements, split.inner - chunk * chunk_elements);
        const float* xv = read_f32(x, begin, count, x_buffer.data());
        float* yv = write_f32(y, begin, y_buffer.data());
        for (std::int64_t i = 0; i < count; ++i) yv[i] = (xv[i] - m) * f + b;
        store_f32(y, begin, count, yv);
      }
    }
  });
}

}  // namespace porta::detail
