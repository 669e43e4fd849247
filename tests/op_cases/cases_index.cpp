// Gather, comparisons, logical ops and where, in every dtype: odd sizes, size-1 dims, negative
// indices, broadcasts of every operand, and ties (equal values) for the comparisons.
#include <string>
#include <vector>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {
namespace {

void add_gather_cases(std::vector<OpCase>& list, DType t) {
  struct Ga {
    std::string variant;
    Shape data, indices;
    std::int64_t axis;
    DType index_dtype = DType::i64;
  };
  const Ga gathers[] = {
      {"embedding_rows", {11, 5}, {3, 4}, 0},
      {"class_token_axis1", {2, 7, 3}, {1}, 1},
      {"last_axis_i32", {3, 4, 9}, {5}, -1, DType::i32},
      {"size1_dims", {1, 6, 1}, {1, 1}, 1},
      {"odd_129x127_rows", {129, 127}, {31}, 0},
      {"indices_rank3", {4, 3}, {2, 1, 3}, 1, DType::i32},
  };
  for (const Ga& ga : gathers)
    add_case(list, OpKind::Gather, ga.variant, t, [ga](CaseGraph& c) {
      const auto rank = static_cast<std::int64_t>(ga.data.size());
      const std::int64_t extent = ga.data[static_cast<std::size_t>(ga.axis < 0 ? ga.axis + rank : ga.axis)];
      return c.g.gather(c.input(ga.data), c.indices(ga.indices, extent, ga.index_dtype), ga.axis);
    });
  // Indices computed at run time (from an input), as a model's token ids are.
  add_case(list, OpKind::Gather, "run_time_indices", t, [](CaseGraph& c) {
    return c.g.gather(c.input({8, 6}), c.spread_input(DType::i64, {2, 5}, 8.0f), 0);
  });
}

void add_compare_cases(std::vector<OpCase>& list, DType t) {
  using Op = porta::Comparison;  // not cases::Comparison, verify.hpp's NMSE record
  for (const Op op : {Op::Equal, Op::Less, Op::LessOrEqual, Op::Greater, Op::GreaterOrEqual}) {
    const std::string name(to_string(op));
    add_case(list, OpKind::Compare, name + "_same_3x17", t,
             [op](CaseGraph& c) { return c.g.compare(c.input({3, 17}), c.input({3, 17}), op); });
    add_case(list, OpKind::Compare, name + "_broadcast_both", t,
             [op](CaseGraph& c) { return c.g.compare(c.input({4, 1, 5}), c.input({3, 1}), op); });
    // x against its own transpose: the diagonal ties.
    add_case(list, OpKind::Compare, name + "_ties", t, [op](CaseGraph& c) {
      const Tensor x = c.input({5, 5});
      return c.g.compare(x, c.g.transpose(x, {1, 0}), op);
    });
  }
  add_case(list, OpKind::Compare, "less_scalar_constant_129x127", t,
           [](CaseGraph& c) { return c.g.less(c.input({129, 127}), c.weights({1})); });
}

void add_logical_cases(std::vector<OpCase>& list) {
  const DType t = DType::boolean;
  add_case(list, OpKind::Logical, "not_3x17", t, [](CaseGraph& c) { return c.g.logical_not(c.input({3, 17})); });
  add_case(list, OpKind::Logical, "and_broadcast_both", t,
           [](CaseGraph& c) { return c.g.logical_and(c.input({4, 1, 5}), c.input({3, 1})); });
  add_case(list, OpKind::Logical, "or_odd_129x127", t,
           [](CaseGraph& c) { return c.g.logical_or(c.input({129, 127}), c.input({129, 127})); });
  add_case(list, OpKind::Logical, "or_scalar", t,
           [](CaseGraph& c) { return c.g.logical_or(c.input({1}), c.input({2, 3})); });
}

void add_where_cases(std::vector<OpCase>& list, DType t) {
  struct Wh {
    std::string variant;
    Shape cond, x, y;
  };
  const Wh wheres[] = {
      {"same_3x17", {3, 17}, {3, 17}, {3, 17}},
      {"broadcast_all_three", {3, 1}, {1, 4}, {2, 3, 4}},
      {"scalar_y", {5, 6}, {5, 6}, {1}},
      {"size1_dims", {1, 7, 1}, {1, 1, 3}, {1, 7, 3}},
      {"odd_129x127_row_mask", {1, 127}, {129, 127}, {129, 127}},
  };
  for (const Wh& w : wheres)
    add_case(list, OpKind::Where, w.variant, t, [w](CaseGraph& c) {
      return c.g.where(c.spread_input(DType::boolean, w.cond, 1.0f), c.input(w.x), c.input(w.y));
    });
  // Attention's masking: a constant bool mask selects the scores or a large negative value.
  add_case(list, OpKind::Where, "constant_mask", t, [](CaseGraph& c) {
    const Tensor mask = c.g.less(c.indices({1, 8}, 4), c.indices({8, 1}, 4));
    return c.g.where(mask, c.input({2, 8, 8}), c.weights({1}));
  });
}

}  // namespace

void add_index_cases(std::vector<OpCase>& list, DType t) {
  add_gather_cases(list, t);
  add_compare_cases(list, t);
  if (t == DType::boolean) add_logical_cases(list);
  add_where_cases(list, t);
}

}  // namespace porta::cases::detail
