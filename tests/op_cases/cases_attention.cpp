// Attention cases: odd sizes, size-1 dims, sq != sk, v wider or narrower than q, masks of every
// broadcast, causal with and without a mask, sizes that cross the CPU's 64-row blocks, an explicit
// scale, and q read through a strided view as heads split from a [batch, seq, heads, head_dim] tensor.
#include <string>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {

void add_attention_cases(std::vector<OpCase>& list, DType t) {
  struct Sizes {
    std::string variant;
    std::int64_t b, h, sq, sk, d, dv;
    AttentionParams p = {};
    Shape mask = {};  // none when empty
  };
  const Sizes sizes[] = {
      {"1x1x1x1", 1, 1, 1, 1, 1, 1},
      {"2x3x5x5_d4", 2, 3, 5, 5, 4, 4},
      {"sq7_sk13_d5_dv3", 2, 2, 7, 13, 5, 3},
      {"sq13_sk1", 1, 2, 13, 1, 8, 8},
      {"scale_half", 1, 2, 6, 9, 4, 4, {.scale = 0.5f}},
      {"causal_9x9", 1, 2, 9, 9, 4, 6, {.causal = true}},
      {"causal_sq5_sk9", 2, 1, 5, 9, 3, 3, {.causal = true}},
      {"causal_sq9_sk5", 2, 1, 9, 5, 3, 3, {.causal = true}},
      {"mask_keys_2x1x1xsk", 2, 3, 5, 7, 4, 4, {}, {2, 1, 1, 7}},
      {"mask_full", 2, 2, 5, 7, 4, 4, {}, {2, 2, 5, 7}},
      {"mask_rows_sqxsk", 1, 3, 6, 6, 4, 4, {}, {6, 6}},
      {"mask_causal", 2, 2, 6, 8, 4, 4, {.causal = true}, {2, 1, 1, 8}},
      {"blocks_1x2x130x70_d64", 1, 2, 130, 70, 64, 64, {}, {1, 1, 1, 70}},
      {"causal_blocks_1x1x150x150_d16", 1, 1, 150, 150, 16, 16, {.causal = true}},
      {"wide_v_d16_dv70", 1, 2, 9, 67, 16, 70},
  };
  // -10000 where masked (f16 holds it), plus a seeded bias in [0, 1): the last key of each row
  // masked, and every third key of the others.
  for (const Sizes& s : sizes)
    add_case(list, OpKind::Attention, s.variant, t, [s](CaseGraph& c) {
      const Tensor q = c.input({s.b, s.h, s.sq, s.d}), k = c.input({s.b, s.h, s.sk, s.d});
      const Tensor v = c.input({s.b, s.h, s.sk, s.dv});
      if (s.mask.empty()) return c.g.attention(q, k, v, s.p);
      const std::int64_t keys = s.mask.back();
      const Tensor mask = c.weights_with(s.mask, [keys](std::int64_t i, float r) {
        return (i % keys == keys - 1 || i % 3 == 2 ? -10000.0f : 0.0f) + r;
      });
      return c.g.attention(q, k, v, s.p, mask);
    });
  add_case(list, OpKind::Attention, "strided_heads_view", t, [](CaseGraph& c) {
    // q [1, 2, 5, 4] read from a [1, 5, 2, 4] buffer: strides {40, 4, 8, 1}.
    const Tensor q = c.input({1, 2, 5, 4}, {40, 4, 8, 1});
    return c.g.attention(q, c.input({1, 2, 6, 4}), c.input({1, 2, 6, 3}));
  });
}

}  // namespace porta::cases::detail
