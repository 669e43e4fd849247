// Attention as its unfused graph computes it, in double: every score of a row, then its softmax,
// then the weighted sum of v.
#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>
#include <vector>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void ref_attention(const HostOpArgs& args) {
  const HostTensor &q = args.inputs[0], &k = args.inputs[1], &v = args.inputs[2];
  const HostTensor* mask = args.inputs.size() > 3 ? &args.inputs[3] : nullptr;
  const AttentionDims d = attention_dims(std::get<AttentionParams>(args.node.params), q.shape(), v.shape(),
                                         mask ? &mask->shape() : nullptr);
  std::vector<double> scores(static_cast<std::size_t>(d.keys));
  for (std::int64_t bh = 0; bh < d.problems(); ++bh) {
    for (std::int64_t i = 0; i < d.queries; ++i) {
      const std::int64_t q_row = (bh * d.queries + i) * d.depth;
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < d.keys; ++j) {
        double s = -std::numeric_limits<double>::infinity();  // a causally hidden key weighs exactly 0
        if (j < d.visible_keys(i)) {
          s = 0.0;
          for (std::int64_t c = 0; c < d.depth; ++c)
            s += double{q.load(q_row + c)} * k.load((bh * d.keys + j) * d.depth + c);
          s *= d.scale;
          if (mask) s += mask->load(d.mask_row(bh, i) + j * d.mask_stride[3]);
        }
        scores[j] = s;
        max = std::max(max, s);
      }
      double sum = 0.0;
      for (double& s : scores) sum += s = std::exp(s - max);
      for (std::int64_t c = 0; c < d.width; ++c) {
        double y = 0.0;
        for (std::int64_t j = 0; j < d.keys; ++j) y += scores[j] * v.load((bh * d.keys + j) * d.width + c);
        args.output.store((bh * d.queries + i) * d.width + c, static_cast<float>(y / sum));
      }
    }
  }
}

}  // namespace porta::detail
