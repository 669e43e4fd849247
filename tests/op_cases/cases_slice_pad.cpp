// Slice (with split, which the builder lowers to slices), pad and expand: ops that only move or
// repeat elements, with every parameter, negative indices and steps, clamping, and size-1 dims.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {
namespace {

constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();

void add_slice_cases(std::vector<OpCase>& list, DType t) {
  struct Sl {
    std::string variant;
    Shape x;
    SliceParams p;
  };
  const Sl slices[] = {
      {"1d_middle", {17}, {{3}, {11}, {}, {}}},
      {"all_axes_default", {5, 7}, {{1, 2}, {4, 6}, {}, {}}},
      {"negative_indices", {5, 7}, {{-4}, {-1}, {1}, {}}},
      {"clamped_to_end", {6, 9}, {{2, -100}, {big, 100}, {0, 1}, {}}},
      {"step_3", {2, 3, 13}, {{1}, {13}, {2}, {3}}},
      {"reverse_whole_axis", {4, 5}, {{-1}, {-big}, {1}, {-1}}},
      {"reverse_step_2", {3, 11}, {{9}, {0}, {-1}, {-2}}},
      {"reverse_clamped_start", {3, 7}, {{100}, {-100}, {1}, {-3}}},
      {"nchw_channels_and_rows", {2, 6, 5, 4}, {{1, 4}, {5, 1}, {1, 2}, {2, -1}}},
      {"axes_out_of_order", {3, 4, 5}, {{1, 0}, {4, 1}, {2, -3}, {}}},
      {"size1_dims", {1, 5, 1, 3}, {{0, 1}, {1, 3}, {2, 3}, {1, 1}}},
      {"single_element", {4, 6}, {{2, 5}, {3, 6}, {0, 1}, {}}},
      {"no_axes_sliced", {3, 4}, {{}, {}, {}, {}}},
      {"odd_129x127_last_column", {129, 127}, {{-1}, {big}, {-1}, {}}},
      {"rank6", {2, 3, 1, 4, 2, 3}, {{1, 3, 1}, {-big, 0, 3}, {1, 3, 5}, {-1, -2, 1}}},
  };
  for (const Sl& s : slices)
    add_case(list, OpKind::Slice, s.variant, t, [s](CaseGraph& c) { return c.g.slice(c.input(s.x), s.p); });
  add_case(list, OpKind::Slice, "strided_view", t, [](CaseGraph& c) {
    return c.g.slice(c.input({3, 5}, {12, 2}), {{1, 4}, {3, 0}, {0, 1}, {1, -2}});
  });
  add_case(list, OpKind::Slice, "of_a_constant", t,
           [](CaseGraph& c) { return c.g.slice(c.weights({4, 6}), {{1}, {big}, {1}, {2}}); });
  // Split's pieces are Slice nodes; each case checks one piece (the graph has one output).
  struct Sp {
    std::string variant;
    Shape x;
    std::int64_t axis;
    std::vector<std::int64_t> sizes;
    std::size_t piece;
  };
  const Sp splits[] = {
      {"split_channels_first", {1, 6, 3, 3}, 1, {2, 4}, 0},
      {"split_channels_last", {1, 6, 3, 3}, 1, {2, 4}, 1},
      {"split_uneven_last_axis", {3, 11}, -1, {4, 1, 6}, 1},
      {"split_single_piece", {2, 5}, 0, {2}, 0},
  };
  for (const Sp& s : splits)
    add_case(list, OpKind::Slice, s.variant, t,
             [s](CaseGraph& c) { return c.g.split(c.input(s.x), s.axis, s.sizes)[s.piece]; });
}

void add_pad_cases(std::vector<OpCase>& list, DType t) {
  struct Pd {
    std::string variant;
    Shape x;
    PadParams p;
  };
  const Pd pads[] = {
      {"constant_zero_hw", {1, 2, 3, 4}, {{0, 0, 1, 2, 0, 0, 2, 1}, PadMode::Constant, 0.0f}},
      {"constant_value_1d", {5}, {{3, 2}, PadMode::Constant, 1.5f}},
      {"constant_all_axes", {2, 3, 4}, {{1, 2, 0, 1, 0, 3}, PadMode::Constant, -0.25f}},
      {"constant_negative_crops", {4, 6}, {{-1, 2, 1, -3}, PadMode::Constant, 2.0f}},
      {"constant_size1_dims", {1, 3, 1}, {{2, 0, 1, 0, 1, 3}, PadMode::Constant, 0.5f}},
      {"reflect_hw", {1, 2, 4, 5}, {{0, 0, 3, 4, 0, 0, 2, 1}, PadMode::Reflect, 0.0f}},
      {"reflect_1d", {7}, {{6, 6}, PadMode::Reflect, 0.0f}},
      {"reflect_outer_axis", {3, 2, 3}, {{2, 0, 1, 1, 0, 0}, PadMode::Reflect, 0.0f}},
      {"edge_hw", {1, 2, 3, 4}, {{0, 0, 2, 3, 0, 0, 4, 1}, PadMode::Edge, 0.0f}},
      {"edge_size1_dims", {1, 4, 1}, {{2, 1, 3, 1, 0, 2}, PadMode::Edge, 0.0f}},
      {"edge_odd_129x127", {129, 127}, {{1, 0, 2, 3}, PadMode::Edge, 0.0f}},
      {"nothing_padded", {3, 5}, {{0, 0, 0, 0}, PadMode::Reflect, 0.0f}},
      {"stride_spread_rank6", {2, 3, 5, 1, 4, 1}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2}, PadMode::Constant, 0.0f}},
      {"reflect_rows_and_columns", {2, 5, 6}, {{0, 2, 3, 1, 4, 1}, PadMode::Reflect, 0.0f}},
  };
  for (const Pd& pd : pads)
    add_case(list, OpKind::Pad, pd.variant, t, [pd](CaseGraph& c) { return c.g.pad(c.input(pd.x), pd.p); });
  add_case(list, OpKind::Pad, "strided_view", t, [](CaseGraph& c) {
    return c.g.pad(c.input({3, 5}, {12, 2}), {{1, 2, 2, 1}, PadMode::Reflect, 0.0f});
  });
}

void add_expand_cases(std::vector<OpCase>& list, DType t) {
  struct Ex {
    std::string variant;
    Shape x, shape;
  };
  const Ex expands[] = {
      {"scalar_to_2d", {1}, {3, 5}},           {"row", {7}, {4, 7}},
      {"column", {5, 1}, {5, 6}},              {"higher_rank", {3, 1}, {2, 1, 3, 4}},
      {"shape_of_ones", {2, 3}, {1, 1, 1}},  // the result keeps x's extents
      {"same_shape", {3, 4}, {3, 4}},          {"channel_bias", {1, 3, 1, 1}, {2, 3, 4, 5}},
      {"odd_1x127_to_129", {1, 127}, {129, 127}},
  };
  for (const Ex& e : expands)
    add_case(list, OpKind::Expand, e.variant, t, [e](CaseGraph& c) { return c.g.expand(c.input(e.x), e.shape); });
  add_case(list, OpKind::Expand, "strided_view", t,
           [](CaseGraph& c) { return c.g.expand(c.input({3, 1}, {4, 1}), {2, 3, 5}); });
}

}  // namespace

void add_slice_pad_cases(std::vector<OpCase>& list, DType t) {
  add_slice_cases(list, t);
  add_pad_cases(list, t);
  add_expand_cases(list, t);
}

}  // namespace porta::cases::detail
