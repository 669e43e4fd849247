// Reduction cases: every reduction over trailing, leading, middle and scattered axes, all of them,
// negative axes, size-1 dimensions and strided inputs, with and without keepdims; layer and RMS
// normalisation, which reduce rows.
#include <string>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {

void add_reduce_cases(std::vector<OpCase>& list, DType t) {
  struct Axes {
    std::string variant;
    Shape x;
    std::vector<std::int64_t> axes;
    Shape strides = {};
    bool dropped_too = false;  // also without keepdims (the same kernels; only the output shape differs)
  };
  const Axes shapes[] = {
      {"1_all", {1}, {}},
      {"3x17_last", {3, 17}, {1}, {}, true},
      {"3x17_first", {3, 17}, {0}},
      {"3x17_all", {3, 17}, {}, {}, true},
      {"2x3x5x7_channels", {2, 3, 5, 7}, {1}},
      {"2x3x5x7_spatial", {2, 3, 5, 7}, {2, 3}},
      {"2x3x5x7_scattered", {2, 3, 5, 7}, {0, 2}, {}, true},
      {"2x3x5x7_negative", {2, 3, 5, 7}, {-1, -3}},
      {"2x3x5x7_outer_three", {2, 3, 5, 7}, {0, 1, 2}},
      {"size1_dims_1x5x1x3", {1, 5, 1, 3}, {0, 2}},
      {"large_300x257_rows", {300, 257}, {1}},  // enough outputs and work to be split across threads
      {"large_300x257_columns", {300, 257}, {0}},
      {"large_70001_all", {70001}, {}},
      {"transposed_view", {5, 3}, {1}, {1, 5}},
  };
  for (const Reduction op : {Reduction::Sum, Reduction::Mean, Reduction::Max, Reduction::Min})
    for (const Axes& s : shapes)
      for (const bool keepdims : {true, false}) {
        if (!keepdims && !s.dropped_too) continue;
        const std::string variant = std::string(to_string(op)) + "_" + s.variant + (keepdims ? "" : "_dropped");
        add_case(list, OpKind::Reduce, variant, t, [op, s, keepdims](CaseGraph& c) {
          return c.g.reduce(c.input(s.x, s.strides), {.op = op, .axes = s.axes, .keepdims = keepdims});
        });
      }
}

void add_norm_cases(std::vector<OpCase>& list, DType t) {
  struct Rows {
    std::string variant;
    Shape x;
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    float offset = 0.0f;  // added to x: a mean far from 0 beside the spread
    bool constant = false;  // every row one value (x's last dim expanded): normalises to exactly 0
  };
  const Rows shapes[] = {
      {"1", {1}},
      {"3x17", {3, 17}},
      {"2x13x768_bert_rows", {2, 13, 768}},
      {"2x3x5x7_axis1", {2, 3, 5, 7}, 1},
      {"2x3x5x7_axis-2", {2, 3, 5, 7}, -2},
      {"size1_rows_1x1x9", {1, 1, 9}},
      {"axis0_all", {4, 6}, 0},
      {"large_300x257", {300, 257}},
      {"epsilon_1e-2", {3, 17}, -1, 1e-2f},
      {"epsilon_0", {3, 17}, -1, 0.0f},
      {"offset_mean_100", {5, 64}, -1, 1e-5f, 100.0f},
      {"constant_rows_5x67", {5, 67}, -1, 1e-5f, 0.1f, true},
  };
  for (const Rows& s : shapes) {
    const auto normalised = [s](CaseGraph& c, Tensor& x) {
      if (s.constant) {
        Shape column = s.x;
        column.back() = 1;
        x = c.g.expand(c.input(column), s.x);
      } else {
        x = c.input(s.x);
      }
      if (s.offset != 0.0f) x = c.g.add(x, c.scalar(s.offset));
      const auto rank = static_cast<std::int64_t>(s.x.size());
      return Shape(s.x.begin() + (s.axis < 0 ? s.axis + rank : s.axis), s.x.end());
    };
    const NormParams p{.axis = s.axis, .epsilon = s.epsilon};
    add_case(list, OpKind::LayerNorm, s.variant, t, [normalised, p](CaseGraph& c) {
      Tensor x;
      const Shape n = normalised(c, x);
      return c.g.layer_norm(x, c.weights(n), c.weights(n), p);
    });
    add_case(list, OpKind::LayerNorm, "no_bias_" + s.variant, t, [normalised, p](CaseGraph& c) {
      Tensor x;
      const Shape n = normalised(c, x);
      return c.g.layer_norm(x, c.weights(n), {}, p);
    });
    add_case(list, OpKind::RmsNorm, s.variant, t, [normalised, p](CaseGraph& c) {
      Tensor x;
      const Shape n = normalised(c, x);
      return c.g.rms_norm(x, c.weights(n), p);
    });
  }
}

}  // namespace porta::cases::detail
