// Layer and RMS normalisation: rows in parallel, each in f32 in two passes (the mean, then the
// spread about it), which stays accurate where the mean is large beside the spread.
#include <cmath>
#include <functional>
#include <optional>
#include <variant>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/ops/lane_fold.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"

namespace porta::detail {
namespace {

void normalise(const HostOpArgs& args, bool rms) {
  const auto& p = std::get<NormParams>(args.node.params);
  const AxisSplit rows = norm_rows(args.inputs[0].shape(), p.axis);
  const std::int64_t n = rows.axis;
  const F32Input x(args.inputs[0]), scale(args.inputs[1]);
  std::optional<F32Input> bias;
  if (args.inputs.size() > 2) bias.emplace(args.inputs[2]);
  const F32Output y(args.output);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows.outer), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t row = r.begin(); row != r.end(); ++row) {
      const float* xv = x.data() + row * n;
      float* yv = y.data() + row * n;
      float mean = 0.0f;
      if (!rms) {  // summed in f64: a row of equal values has exactly that mean, so x - mean is 0, not
                   // a rounding that 1 / sqrt(epsilon) would magnify
        const double sum = lane_fold(n, 0.0, [xv](std::int64_t i) { return double{xv[i]}; }, std::plus<>{});
        mean = static_cast<float>(sum / static_cast<double>(n));
      }
      const float spread =
          lane_fold(n, 0.0f, [xv, mean](std::int64_t i) { return (xv[i] - mean) * (xv[i] - mean); }, std::plus<>{});
      const float inv = 1.0f / std::sqrt(spread / static_cast<float>(n) + p.epsilon);
      const float* sv = scale.data();
      if (bias) {
        const float* bv = bias->data();
        for (std::int64_t i = 0; i < n; ++i) yv[i] = (xv[i] - mean) * inv * sv[i] + bv[i];
      } else {
        for (std::int64_t i = 0; i < n; ++i) yv[i] = (xv[i] - mean) * inv * sv[i];
      }
    }
    y.commit(r.begin() * n, (r.end() - r.begin()) * n);
  });
}

}  // namespace

void cpu_layer_norm(const HostOpArgs& args) { normalise(args, false); }
void cpu_rms_norm(const HostOpArgs& args) { normalise(args, true); }

}  // namespace porta::detail
