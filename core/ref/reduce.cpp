#include <algorithm>
#include <limits>
#include <variant>
#include <vector>

#include "core/ref/kernels.hpp"

namespace porta::detail {

// Walks the input in order and folds each element into its output element: a plain loop that
// shares no indexing with the backends' kernels.
void ref_reduce(const HostOpArgs& args) {
  const HostTensor& x = args.inputs[0];
  const auto& p = std::get<ReduceParams>(args.node.params);
  const Shape& shape = x.shape();
  const auto rank = shape.size();
  std::vector<bool> reduced(rank, false);
  for (const std::int64_t axis : p.axes) reduced[static_cast<std::size_t>(axis)] = true;
  // The output's stride of each input dimension, 0 along reduced ones.
  std::vector<std::int64_t> out_stride(rank, 0);
  std::int64_t stride = 1, count = 1;
  for (std::size_t d = rank; d-- > 0;) {
    if (reduced[d]) {
      count *= shape[d];
      continue;
    }
    out_stride[d] = stride;
    stride *= shape[d];
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double start = p.op == Reduction::Max ? -inf : p.op == Reduction::Min ? inf : 0.0;
  std::vector<double> acc(static_cast<std::size_t>(args.output.numel()), start);
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < rank; ++d) o += index[d] * out_stride[d];
    double& a = acc[static_cast<std::size_t>(o)];
    const double v = x.load(i);
    a = p.op == Reduction::Max ? std::max(a, v) : p.op == Reduction::Min ? std::min(a, v) : a + v;
    for (std::size_t d = rank; d-- > 0;) {  // the next input index, row-major
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  for (std::size_t o = 0; o < acc.size(); ++o) {
    const double v = p.op == Reduction::Mean ? acc[o] / static_cast<double>(count) : acc[o];
    args.output.store(static_cast<std::int64_t>(o), static_cast<float>(v));
  }
}

}  // namespace porta::detail
