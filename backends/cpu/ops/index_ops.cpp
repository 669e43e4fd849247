// Gather, comparisons, logical ops and where. Gather copies whole rows of the dimensions after its
// axis; the others stream over the output in chunks, reading operands through broadcast maps.
#include <cstring>
#include <variant>

#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"

namespace porta::detail {
namespace {

// Calls f(load), `load(data, i)` reading element i of a buffer of dtype t as a value whose
// ordering is the dtype's (f16 and bf16 widened to float, integers kept exact).
template <class F>
void with_loader(DType t, F&& f) {
  switch (t) {
    case DType::f32: f([](const std::byte* p, std::int64_t i) { return reinterpret_cast<const float*>(p)[i]; }); break;
    case DType::f16:
      f([](const std::byte* p, std::int64_t i) { return f16_to_f32(reinterpret_cast<const std::uint16_t*>(p)[i]); });
      break;
    case DType::bf16:
      f([](const std::byte* p, std::int64_t i) { return bf16_to_f32(reinterpret_cast<const std::uint16_t*>(p)[i]); });
      break;
    case DType::i64:
      f([](const std::byte* p, std::int64_t i) { return reinterpret_cast<const std::int64_t*>(p)[i]; });
      break;
    case DType::i32:
      f([](const std::byte* p, std::int64_t i) { return reinterpret_cast<const std::int32_t*>(p)[i]; });
      break;
    case DType::boolean:
      f([](const std::byte* p, std::int64_t i) { return reinterpret_cast<const std::uint8_t*>(p)[i] != 0; });
      break;
  }
}

// y[i] = f(i, a_index, b_index) over chunks of the output, the operand indices from broadcast maps
// (a plain count where an operand has the output's shape).
template <class F>
void broadcast_chunks(const HostOpArgs& args, std::span<const HostTensor> operands, F f) {
  std::vector<BroadcastIndex> maps;
  for (const HostTensor& t : operands) maps.emplace_back(t.shape(), args.output.shape());
  parallel_chunks(args.output.numel(), chunk_elements, [&](std::int64_t begin, std::int64_t count) {
    for (std::int64_t i = begin; i < begin + count; ++i) f(i, maps);
  });
}

}  // namespace

void cpu_gather(const HostOpArgs& args) {
  const HostTensor& data = args.inputs[0];
  const HostTensor& indices = args.inputs[1];
  const AxisSplit d = split_at_axis(data.shape(), std::get<GatherParams>(args.node.params).axis);
  const std::int64_t count = indices.numel();
  const std::int64_t row_bytes = d.inner * static_cast<std::int64_t>(size_of(data.dtype()));
  const auto rows = tbb::blocked_range<std::int64_t>(0, d.outer * count);
  tbb::parallel_for(rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      const std::int64_t outer = row / count, j = row % count;
      const std::int64_t index = load_as_i64(indices.data, static_cast<std::size_t>(j), indices.dtype());
      const std::int64_t at = gather_coordinate(index, d.axis, args.node);
      std::memcpy(args.output.data + row * row_bytes, data.data + (outer * d.axis + at) * row_bytes,
                  static_cast<std::size_t>(row_bytes));
    }
  });
}

void cpu_compare(const HostOpArgs& args) {
  const Comparison op = std::get<CompareParams>(args.node.params).op;
  auto* y = reinterpret_cast<std::uint8_t*>(args.output.data);
  const std::byte* a = args.inputs[0].data;
  const std::byte* b = args.inputs[1].data;
  with_loader(args.inputs[0].dtype(), [&](auto load) {
    broadcast_chunks(args, args.inputs, [&](std::int64_t i, const std::vector<BroadcastIndex>& at) {
      y[i] = compare(op, load(a, at[0](i)), load(b, at[1](i))) ? 1 : 0;
    });
  });
}

void cpu_logical(const HostOpArgs& args) {
  const LogicalOp op = std::get<LogicalParams>(args.node.params).op;
  auto* y = reinterpret_cast<std::uint8_t*>(args.output.data);
  const auto* a = reinterpret_cast<const std::uint8_t*>(args.inputs[0].data);
  const auto* b = reinterpret_cast<const std::uint8_t*>(args.inputs.back().data);  // a itself for not
  const bool unary = args.inputs.size() == 1;
  broadcast_chunks(args, args.inputs, [&](std::int64_t i, const std::vector<BroadcastIndex>& at) {
    y[i] = logical(op, a[at[0](i)] != 0, b[at[unary ? 0 : 1](i)] != 0) ? 1 : 0;
  });
}

void cpu_where(const HostOpArgs& args) {
  const auto* cond = reinterpret_cast<const std::uint8_t*>(args.inputs[0].data);
  with_element_bits(size_of(args.output.dtype()), [&](auto element) {
    using Element = decltype(element);
    const auto* x = reinterpret_cast<const Element*>(args.inputs[1].data);
    const auto* other = reinterpret_cast<const Element*>(args.inputs[2].data);
    auto* y = reinterpret_cast<Element*>(args.output.data);
    broadcast_chunks(args, args.inputs, [&](std::int64_t i, const std::vector<BroadcastIndex>& at) {
      y[i] = cond[at[0](i)] != 0 ? x[at[1](i)] : other[at[2](i)];
    });
  });
}

}  // namespace porta::detail
