// Dropout's cases: ratios 0 (identity), 0.1 and 0.5 over odd sizes, under a few seeds and steps, a
// draw per element; and stochastic depth's masks over leading dims (1: per sample, 2, and 0: the
// whole tensor); and shards of a larger batch (batch_offset). The step is an f32 constant, so every
// device reads the same one.
#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {

void add_dropout_cases(std::vector<OpCase>& list, DType t) {
  struct Kind {
    std::string variant;
    DropoutParams p;
    float step;
  };
  const Kind kinds[] = {
      {"p0", {.ratio = 0.0f, .seed = 1}, 0.0f},
      {"p0.1", {.ratio = 0.1f, .seed = 42}, 7.0f},
      {"p0.5", {.ratio = 0.5f, .seed = 0xfedcba9876543210ull}, 123456.0f},
      {"dims1_p0.3", {.ratio = 0.3f, .seed = 9, .mask_dims = 1}, 3.0f},
      {"dims2_p0.5", {.ratio = 0.5f, .seed = 77, .mask_dims = 2}, 11.0f},
      {"dims0_p0.5", {.ratio = 0.5f, .seed = 5, .mask_dims = 0}, 2.0f},
      {"offset5_p0.5", {.ratio = 0.5f, .seed = 13, .batch_offset = 5}, 4.0f},
      {"dims1_offset3_p0.3", {.ratio = 0.3f, .seed = 9, .mask_dims = 1, .batch_offset = 3}, 3.0f},
      {"dims2_offset1000_p0.5", {.ratio = 0.5f, .seed = 77, .mask_dims = 2, .batch_offset = 1000}, 11.0f},
  };
  for (const Kind& k : kinds)
    for (const Shape& shape : {Shape{1}, Shape{7, 19}, Shape{3, 5, 17, 13}, Shape{37, 3, 1, 5}}) {
      if (k.p.mask_dims > static_cast<std::int32_t>(shape.size())) continue;
      const std::string size = std::to_string(shape.front()) + "x" + std::to_string(shape.back());
      add_case(list, OpKind::Dropout, k.variant + "_" + size, t, [k, shape](CaseGraph& c) {
        const float step[] = {k.step};
        return c.g.dropout(c.input(shape), c.g.constant("step", {1}, step, DType::f32), k.p);
      });
    }
}

}  // namespace porta::cases::detail
