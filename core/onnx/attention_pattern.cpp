#include "core/onnx/attention_pattern.hpp"

#include <optional>
#include <variant>
#include <vector>

#include "core/compile/rewrite.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::onnx::detail {
namespace {

using porta::detail::GraphRewriter;

// One matched chain: the nodes it replaces and what the attention node reads.
struct Match {
  std::vector<std::size_t> absorbed;  // node indices, the final MatMul last
  Tensor q, k_source, v, mask;
  std::vector<std::int64_t> k_perm;   // k = transpose(k_source, k_perm); empty: k_source itself
  float scale = 1.0f;
};

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g), readers_(g.tensors().size(), 0) {
    for (const Node& n : g.nodes())
      for (const Tensor t : n.inputs) ++readers_[static_cast<std::size_t>(t.id)];
    for (const auto& [name, t] : g.outputs()) readers_[static_cast<std::size_t>(t.id)] += 2;
  }

  // The chain that ends at node `last` (a MatMul), if there is one.
  std::optional<Match> match(std::size_t last) const {
    const Node& pv = g_.nodes()[last];
    if (pv.op != OpKind::MatMul || !plain(pv)) return std::nullopt;
    Match m;
    m.v = pv.inputs[1];
    const Node* softmax = sole_producer(pv.inputs[0], OpKind::Softmax);
    if (!softmax || g_.shape(softmax->output).size() != 4 || std::get<SoftmaxParams>(softmax->params).axis != 3)
      return std::nullopt;
    m.absorbed = {index(*softmax)};
    Tensor scores = softmax->inputs[0];
    if (const Node* add = sole_producer(scores, OpKind::Add)) {  // the mask is the operand that is no chain link
      const bool first = link(add->inputs[0]);
      scores = add->inputs[first ? 0 : 1];
      m.mask = add->inputs[first ? 1 : 0];
      m.absorbed.push_back(index(*add));
    }
    for (const OpKind op : {OpKind::Mul, OpKind::Div})
      if (const Node* scaling = sole_producer(scores, op)) {
        const std::optional<float> factor = scalar(scaling->inputs[1]);
        if (!factor || *factor == 0.0f) return std::nullopt;
        m.scale = op == OpKind::Mul ? *factor : 1.0f / *factor;
        scores = scaling->inputs[0];
        m.absorbed.push_back(index(*scaling));
        break;
      }
    const Node* qk = sole_producer(scores, OpKind::MatMul);
    if (!qk || std::get<MatMulParams>(qk->params).trans_a) return std::nullopt;
    m.absorbed.push_back(index(*qk));
    m.q = qk->inputs[0];
    find_k(*qk, m);
    m.absorbed.push_back(last);
    if (!(m.scale > 0.0f) || !fits(m)) return std::nullopt;
    return m;
  }

 private:
  bool plain(const Node& n) const {
    const auto& p = std::get<MatMulParams>(n.params);
    return !p.trans_a && !p.trans_b;
  }
  std::size_t index(const Node& n) const { return static_cast<std::size_t>(&n - g_.nodes().data()); }
  // The node of kind `op` that makes `t`, where `t` has no reader but the chain's next link.
  const Node* sole_producer(Tensor t, OpKind op) const {
    const TensorInfo& info = g_.info(t);
    if (info.producer < 0 || readers_[static_cast<std::size_t>(t.id)] != 1) return nullptr;
    const Node& n = g_.nodes()[static_cast<std::size_t>(info.producer)];
    return n.op == op ? &n : nullptr;
  }
  bool link(Tensor t) const {
    return sole_producer(t, OpKind::MatMul) || sole_producer(t, OpKind::Mul) || sole_producer(t, OpKind::Div);
  }
  std::optional<float> scalar(Tensor t) const {
    const TensorInfo& info = g_.info(t);
    if (info.role != Role::Constant || info.desc.numel() != 1 || !info.data) return std::nullopt;
    return load_as_f32(info.data->data(), 0, info.desc.dtype);
  }
  // k from kᵀ: MatMul's trans_b, a Transpose read by the MatMul alone (composed), or a new transpose.
  void find_k(const Node& qk, Match& m) const {
    m.k_source = qk.inputs[1];
    if (std::get<MatMulParams>(qk.params).trans_b) return;
    std::vector<std::int64_t> perm{0, 1, 3, 2};
    if (const Node* t = sole_producer(qk.inputs[1], OpKind::Transpose)) {
      const auto& inner = std::get<TransposeParams>(t->params).perm;
      if (inner.size() == 4) {
        for (auto& p : perm) p = inner[static_cast<std::size_t>(p)];
        m.k_source = t->inputs[0];
        m.absorbed.push_back(index(*t));
      }
    }
    if (perm != std::vector<std::int64_t>{0, 1, 2, 3}) m.k_perm = perm;
  }
  // The shapes attention takes: q [b, h, sq, d], k [b, h, sk, d], v [b, h, sk, dv], the mask broadcast.
  bool fits(const Match& m) const {
    const Shape& q = g_.shape(m.q);
    Shape k = g_.shape(m.k_source);
    if (k.size() != 4 || q.size() != 4 || g_.shape(m.v).size() != 4) return false;
    if (!m.k_perm.empty())
      for (std::size_t i = 0; i < 4; ++i) k[i] = g_.shape(m.k_source)[static_cast<std::size_t>(m.k_perm[i])];
    const Shape& v = g_.shape(m.v);
    if (k[0] != q[0] || k[1] != q[1] || v[0] != q[0] || v[1] != q[1] || k[3] != q[3] || v[2] != k[2]) return false;
    if (!m.mask) return true;
    const Shape scores{q[0], q[1], q[2], k[2]};
    Shape joined;
    return g_.shape(m.mask).size() <= 4 && porta::detail::broadcast_shapes(scores, g_.shape(m.mask), joined) &&
           joined == scores;
  }

  const Graph& g_;
  std::vector<int> readers_;
};

}  // namespace

Graph fuse_attention(Graph graph) {
  const Matcher matcher(graph);
  std::vector<std::optional<Match>> ending(graph.nodes().size());  // the chain a node ends, if any
  std::vector<bool> absorbed(graph.nodes().size(), false);
  bool any = false;
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    ending[i] = matcher.match(i);
    if (!ending[i]) continue;
    any = true;
    for (const std::size_t n : ending[i]->absorbed) absorbed[n] = true;
  }
  if (!any) return graph;
  GraphRewriter r(graph);
  r.copy_except(absorbed, [&](std::size_t i, const Node& node) {
    if (!ending[i]) return;  // inside a chain: the node that ends it stands for it
    const Match& m = *ending[i];
    Tensor k = r[m.k_source];
    if (!m.k_perm.empty()) k = r.graph.transpose(k, m.k_perm, node.name + "/k");
    r.replace(node.output, r.graph.attention(r[m.q], k, r[m.v], {.scale = m.scale}, m.mask ? r[m.mask] : Tensor{},
                                             node.name));
  });
  return std::move(r).finish();
}

}  // namespace porta::onnx::detail
