// Pooling, softmax and the shape ops (reshape, flatten, transpose, concat).
#include <string>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {

std::vector<PoolCase> pool_cases() {
  return {
      {"k2_s2", {1, 3, 8, 8}, {.kernel = {2, 2}, .stride = {2, 2}}},
      {"k3_s1_pad1", {2, 2, 7, 9}, {.kernel = {3, 3}, .pad = {1, 1, 1, 1}}},
      {"k3_s2_pad_asym", {1, 3, 9, 8}, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 0, 2, 1}}},
      {"ceil_mode", {1, 2, 7, 7}, {.kernel = {2, 2}, .stride = {2, 2}, .ceil_mode = true}},
      {"ceil_mode_pad1", {1, 2, 8, 8}, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .ceil_mode = true}},
      {"ceil_mode_k3_s3", {2, 3, 10, 11}, {.kernel = {3, 3}, .stride = {3, 3}, .ceil_mode = true}},
      {"dilation2", {1, 2, 9, 9}, {.kernel = {2, 2}, .dilation = {2, 2}}},
      {"dilation2_pad2_s2",
       {1, 1, 8, 8},
       {.kernel = {3, 3}, .stride = {2, 2}, .pad = {2, 2, 2, 2}, .dilation = {2, 2}}},
      {"kernel_2x3_stride_1x2", {1, 3, 6, 9}, {.kernel = {2, 3}, .stride = {1, 2}}},
      {"whole_plane", {1, 2, 5, 7}, {.kernel = {5, 7}}},
      {"input_1x1", {1, 4, 1, 1}, {.kernel = {1, 1}}},
      {"odd_17x13", {1, 3, 17, 13}, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}}},
      // More channels than a block of the cpu's NHWC gradient (64), and a partial one.
      {"channels_70", {2, 70, 9, 7}, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}}},
  };
}


void add_pool_cases(std::vector<OpCase>& list, DType t) {
  std::vector<PoolCase> cases = pool_cases();
  for (PoolCase pc : pool_cases()) {  // every case once more channels-last
    pc.variant += "_nhwc";
    pc.x = stored(Layout::NHWC, pc.x);
    pc.p.layout = Layout::NHWC;
    cases.push_back(pc);
  }
  for (const PoolCase& pc : cases) {
    add_case(list, OpKind::MaxPool2d, pc.variant, t,
             [pc](CaseGraph& c) { return c.g.max_pool2d(c.input(pc.x), pc.p); });
    add_case(list, OpKind::AvgPool2d, pc.variant, t,
             [pc](CaseGraph& c) { return c.g.avg_pool2d(c.input(pc.x), pc.p); });
    const bool padded = pc.p.pad != std::array<std::int64_t, 4>{0, 0, 0, 0};
    if (padded || pc.p.ceil_mode) {
      Pool2dParams p = pc.p;
      p.count_include_pad = true;
      add_case(list, OpKind::AvgPool2d, pc.variant + "_include_pad", t,
               [x = pc.x, p](CaseGraph& c) { return c.g.avg_pool2d(c.input(x), p); });
    }
  }
  for (const Layout layout : {Layout::NCHW, Layout::NHWC})
    for (const Shape& nchw : {Shape{1, 1, 1, 1}, Shape{2, 3, 5, 7}, Shape{1, 17, 13, 11}, Shape{1, 3, 129, 1}}) {
      const Shape x = stored(layout, nchw);
      std::string variant = std::to_string(x[0]);
      for (std::size_t i = 1; i < x.size(); ++i) variant.append("x").append(std::to_string(x[i]));
      if (layout == Layout::NHWC) variant += "_nhwc";
      add_case(list, OpKind::GlobalAvgPool, variant, t,
               [x, layout](CaseGraph& c) { return c.g.global_avg_pool(c.input(x), {.layout = layout}); });
    }
}

namespace {

// Attention's masks, -10000 where masked (f16 holds it) plus a seeded bias in [0, 1): padding keys
// per batch, causal, and any values (an input) along either axis.
void add_masked_softmax_cases(std::vector<OpCase>& list, DType t) {
  const auto masked = [](CaseGraph& c, const Shape& shape, auto is_masked) {
    const std::int64_t columns = shape.back();
    return c.weights_with(shape, [&](std::int64_t i, float r) {
      return (is_masked(i / columns, i % columns) ? -10000.0f : 0.0f) + r;
    });
  };
  add_case(list, OpKind::Softmax, "mask_padding_2x3x5x7", t, [masked](CaseGraph& c) {
    const Tensor mask = masked(c, {2, 1, 1, 7}, [](std::int64_t b, std::int64_t k) { return k >= 5 - b; });
    return c.g.softmax(c.input({2, 3, 5, 7}), -1, mask);
  });
  add_case(list, OpKind::Softmax, "mask_causal_2x3x6x6", t, [masked](CaseGraph& c) {
    const Tensor mask = masked(c, {6, 6}, [](std::int64_t q, std::int64_t k) { return k > q; });
    return c.g.softmax(c.input({2, 3, 6, 6}), -1, mask);
  });
  add_case(list, OpKind::Softmax, "mask_input_3x17", t,
           [](CaseGraph& c) { return c.g.softmax(c.input({3, 17}), -1, c.input({17})); });
  add_case(list, OpKind::Softmax, "mask_input_axis0_5x4", t,
           [](CaseGraph& c) { return c.g.softmax(c.input({5, 4}), 0, c.input({5, 1})); });
}

}  // namespace

void add_softmax_cases(std::vector<OpCase>& list, DType t) {
  struct Sm {
    std::string variant;
    Shape x;
    std::int64_t axis;
    float scale = 1.0f;
  };
  const Sm cases[] = {
      {"3x17_axis-1", {3, 17}, -1},          {"3x17_axis0", {3, 17}, 0},     {"3x17_axis1", {3, 17}, 1},
      {"2x5x7_axis1", {2, 5, 7}, 1},         {"2x3x4x5_axis0", {2, 3, 4, 5}, 0}, {"2x3x4x5_axis-2", {2, 3, 4, 5}, -2},
      {"single_1", {1}, 0},                  {"row_129", {129}, -1},         {"column_129x1_axis1", {129, 1}, 1},
      // Logits up to 100: exp overflows f32 unless the kernel subtracts the maximum first.
      {"large_logits", {4, 33}, -1, 100.0f}, {"large_logits_axis0", {33, 4}, 0, 100.0f},
      // Larger than the cpu backend's blocks of 2^16 elements, along and across the axis.
      {"large_2x40001_axis-1", {2, 40001}, -1},  {"large_3x30001_axis0", {3, 30001}, 0},
  };
  for (const Sm& s : cases)
    add_case(list, OpKind::Softmax, s.variant, t, [s](CaseGraph& c) {
      const Tensor x = s.scale == 1.0f ? c.input(s.x) : c.scaled(c.input(s.x), s.scale);
      return c.g.softmax(x, s.axis);
    });
  add_masked_softmax_cases(list, t);
}

void add_shape_cases(std::vector<OpCase>& list, DType t) {
  struct Rs {
    std::string variant;
    Shape x, target;
  };
  const Rs reshapes[] = {{"infer_minus1", {2, 3, 4}, {-1, 4}},   {"copy_0", {2, 3, 4}, {0, -1}},
                         {"to_1d", {2, 3, 4}, {24}},             {"insert_ones", {2, 3, 4}, {4, 1, 6, 1}},
                         {"scalar_to_rank3", {1}, {1, 1, 1}},     {"odd_129x127", {129, 127}, {127, -1}}};
  for (const Rs& r : reshapes)
    add_case(list, OpKind::Reshape, r.variant, t, [r](CaseGraph& c) { return c.g.reshape(c.input(r.x), r.target); });
  for (const std::int64_t axis : {0, 1, 3, 4, -1})
    add_case(list, OpKind::Reshape, "flatten_axis" + std::to_string(axis), t,
             [axis](CaseGraph& c) { return c.g.flatten(c.input({2, 3, 4, 5}), axis); });
  add_case(list, OpKind::Reshape, "transposed_view", t,
           [](CaseGraph& c) { return c.g.reshape(c.input({4, 3}, {1, 4}), {12}); });

  struct Tr {
    std::string variant;
    Shape x;
    std::vector<std::int64_t> perm;
  };
  const Tr transposes[] = {
      {"2d_default", {3, 17}, {}},           {"2d_129x127", {129, 127}, {1, 0}},   {"identity", {3, 4}, {0, 1}},
      {"2d_300x257", {300, 257}, {1, 0}},  // more than the cpu backend copies in one chunk
      {"3d_102", {2, 3, 4}, {1, 0, 2}},      {"3d_201", {2, 3, 4}, {2, 0, 1}},     {"3d_021", {2, 3, 4}, {0, 2, 1}},
      {"nchw_to_nhwc", {2, 3, 4, 5}, {0, 2, 3, 1}}, {"4d_3120", {2, 3, 4, 5}, {3, 1, 2, 0}},
      {"negative_axes", {2, 3, 4}, {-1, 0, 1}}, {"size1_dims", {1, 5, 1, 3}, {2, 3, 0, 1}},
      {"rank6", {2, 1, 3, 2, 1, 2}, {5, 3, 1, 0, 2, 4}},
      // Batched matrix transposes once adjacent dimensions merge, with tiles ragged both ways.
      {"nchw_to_nhwc_3x67x45", {2, 3, 67, 45}, {0, 2, 3, 1}}, {"nhwc_to_nchw_37ch", {2, 9, 11, 37}, {0, 3, 1, 2}},
      // Only size-1 dimensions move, or one sits between two that swap.
      {"all_size1", {1, 1, 1}, {2, 0, 1}}, {"size1_moves", {3, 1, 4}, {1, 0, 2}}, {"size1_between", {2, 1, 3}, {2, 1, 0}},
      // A strided data gradient's phases interleaved: stride 2 x 3, the last dimension the short one.
      {"phase_interleave", {2, 3, 2, 3, 5, 7}, {0, 1, 4, 2, 5, 3}},
  };
  for (const Tr& tr : transposes)
    add_case(list, OpKind::Transpose, tr.variant, t,
             [tr](CaseGraph& c) { return c.g.transpose(c.input(tr.x), tr.perm); });
  add_case(list, OpKind::Transpose, "strided_view", t,
           [](CaseGraph& c) { return c.g.transpose(c.input({3, 5}, {12, 2}), {1, 0}); });

  struct Cc {
    std::string variant;
    std::vector<Shape> xs;
    std::int64_t axis;
  };
  const Cc concats[] = {
      {"axis0_3_inputs", {{2, 3}, {1, 3}, {4, 3}}, 0},
      {"axis1_3_inputs", {{2, 3}, {2, 1}, {2, 5}}, 1},
      {"axis-1_4d", {{2, 3, 4, 1}, {2, 3, 4, 2}, {2, 3, 4, 3}}, -1},
      {"channels_nchw", {{1, 2, 3, 3}, {1, 5, 3, 3}, {1, 1, 3, 3}}, 1},
      {"axis0_1d", {{1}, {17}, {3}}, 0},
      {"single_input", {{3, 4}}, 0},
      {"large_axis1", {{3, 30000}, {3, 20001}}, 1},
  };
  for (const Cc& cc : concats)
    add_case(list, OpKind::Concat, cc.variant, t, [cc](CaseGraph& c) {
      std::vector<Tensor> xs;
      for (const Shape& s : cc.xs) xs.push_back(c.input(s));
      return c.g.concat(xs, cc.axis);
    });
  add_case(list, OpKind::Concat, "with_constant", t, [](CaseGraph& c) {
    const Tensor xs[] = {c.input({2, 3}), c.weights({2, 4})};
    return c.g.concat(xs, 1);
  });
  add_case(list, OpKind::Concat, "same_tensor_twice", t, [](CaseGraph& c) {
    const Tensor x = c.input({2, 5});
    const Tensor xs[] = {x, x, c.input({1, 5})};
    return c.g.concat(xs, 0);
  });
}

}  // namespace porta::cases::detail
