#pragma once
// Rebuilds a graph node by node through the public builder, so that every rewritten node is
// shape-checked again exactly as a user's would be. Constants share their storage.
#include <span>
#include <vector>

#include "porta/graph.hpp"

namespace porta::detail {

class GraphRewriter {
 public:
  // Copies every input and variable of `source` at once (callers set them by name even when unused).
  explicit GraphRewriter(const Graph& source);

  // The rebuilt tensor for a tensor of the source; constants are copied on first use.
  Tensor operator[](Tensor old);
  void replace(Tensor old, Tensor now) { map_[static_cast<std::size_t>(old.id)] = now; }
  // The rebuilt tensor, or an empty one where there is none yet.
  Tensor find(Tensor old) const { return map_[static_cast<std::size_t>(old.id)]; }

  // The rebuilt tensors of `node`'s inputs.
  std::vector<Tensor> inputs(const Node& node);
  // Re-adds `node` with its inputs mapped, and maps its output.
  Tensor copy(const Node& node);
  // Copies the source's nodes in order, except those marked in `replaced`: for each of those it calls
  // emit(index, node) instead, which adds what stands for the node and maps its output (or adds
  // nothing, where what replaces a later node covers it).
  template <class Emit> void copy_except(const std::vector<bool>& replaced, Emit emit) {
    for (std::size_t i = 0; i < source_.nodes().size(); ++i) {
      const Node& node = source_.nodes()[i];
      if (replaced[i]) emit(i, node);
      else copy(node);
    }
  }
  // Adds `node`'s op with other params and inputs (already rebuilt), named `node.name`.
  Tensor add(const Node& node, const OpParams& params, std::span<const Tensor> inputs);

  // Marks the source's outputs, makes its assignments and hands over the rebuilt graph.
  Graph finish() &&;

  Graph graph;

 private:
  const Graph& source_;
  std::vector<Tensor> map_;
};

}  // namespace porta::detail
