#include "core/onnx/einsum.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "core/onnx/attrs.hpp"

namespace porta::onnx::detail {
namespace {

struct Equation {
  std::vector<std::string> terms;  // one per operand
  std::string output;
};

bool has(std::string_view letters, char c) { return letters.find(c) != std::string_view::npos; }

void check_letters(const std::string& term) {
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') unsupported("Einsum: porta does not take an ellipsis ('...')");
    if (!std::isalpha(static_cast<unsigned char>(term[i]))) invalid("Einsum: '" + term + "' is not a term of letters");
    if (term.find(term[i], i + 1) != std::string::npos)
      unsupported("Einsum: '" + term + "' repeats '" + std::string(1, term[i]) +
                  "' (a diagonal), which porta does not take");
  }
}

Equation parse(std::string_view text) {
  std::string s;
  for (const char c : text)
    if (c != ' ') s += c;
  Equation e;
  const std::size_t arrow = s.find("->");
  const std::string inputs = s.substr(0, arrow);
  for (std::size_t start = 0;;) {
    const std::size_t comma = inputs.find(',', start);
    e.terms.push_back(inputs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    e.output = s.substr(arrow + 2);
  } else {  // implicit: the letters used once, in alphabetical order
    std::map<char, int> uses;
    for (const std::string& t : e.terms)
      for (const char c : t) ++uses[c];
    for (const auto& [c, n] : uses)
      if (n == 1) e.output += c;
  }
  for (const std::string& t : e.terms) check_letters(t);
  check_letters(e.output);
  for (const char c : e.output)
    if (std::none_of(e.terms.begin(), e.terms.end(), [&](const std::string& t) { return has(t, c); }))
      invalid("Einsum: the output's '" + std::string(1, c) + "' is in no operand");
  return e;
}

// An operand and the letters of its dimensions, rearranged through the builder.
class Operand {
 public:
  Operand(Graph& g, Tensor x, std::string letters, std::string name)
      : g_(g), x_(x), letters_(std::move(letters)), name_(std::move(name)) {}

  const std::string& letters() const { return letters_; }
  Tensor tensor() const { return x_; }
  std::int64_t extent(char c) const { return g_.shape(x_)[letters_.find(c)]; }

  // Sums away the letters `keep` lacks.
  void sum_all_but(std::string_view keep) {
    std::vector<std::int64_t> axes;
    std::string kept;
    for (std::size_t i = 0; i < letters_.size(); ++i)
      if (has(keep, letters_[i])) kept += letters_[i];
      else axes.push_back(static_cast<std::int64_t>(i));
    if (axes.empty()) return;
    if (kept.empty()) unsupported("Einsum: a term summed to a scalar");
    x_ = g_.reduce(x_, {.op = Reduction::Sum, .axes = axes, .keepdims = false}, name_ + "/sum");
    letters_ = kept;
  }
  // Transposes to the order of `wanted` (a permutation of its letters).
  void arrange(const std::string& wanted) {
    if (wanted == letters_) return;
    std::vector<std::int64_t> perm;
    for (const char c : wanted) perm.push_back(static_cast<std::int64_t>(letters_.find(c)));
    x_ = g_.transpose(x_, perm, name_ + "/arranged");
    letters_ = wanted;
  }
  // The product of the extents of `letters`' dimensions (1 for none).
  std::int64_t size(std::string_view letters) const {
    std::int64_t n = 1;
    for (const char c : letters) n *= extent(c);
    return n;
  }

 private:
  Graph& g_;
  Tensor x_;
  std::string letters_, name_;
};

// batch, rows, summed and columns letters of a two-operand product into the output's.
Tensor product(Graph& g, Operand& a, Operand& b, const std::string& output, const std::string& name) {
  std::string batch, rows, columns, summed;
  for (const char c : output)
    (has(a.letters(), c) && has(b.letters(), c) ? batch : has(a.letters(), c) ? rows : columns) += c;
  for (const char c : a.letters())
    if (has(b.letters(), c) && !has(output, c)) summed += c;
  for (const char c : batch + summed)
    if (a.extent(c) != b.extent(c))
      invalid("Einsum: '" + std::string(1, c) + "' is " + std::to_string(a.extent(c)) + " in one operand and " +
              std::to_string(b.extent(c)) + " in the other");
  a.arrange(batch + rows + summed);
  b.arrange(batch + summed + columns);
  const std::int64_t count = a.size(batch);
  const Tensor lhs = g.reshape(a.tensor(), {count, a.size(rows), a.size(summed)}, name + "/lhs");
  const Tensor rhs = g.reshape(b.tensor(), {count, b.size(summed), b.size(columns)}, name + "/rhs");
  Shape shape;
  for (const char c : batch + rows) shape.push_back(a.extent(c));
  for (const char c : columns) shape.push_back(b.extent(c));
  Operand y(g, g.reshape(g.matmul(lhs, rhs, {}, name + "/matmul"), shape, name + "/unflattened"),
            batch + rows + columns, name);
  y.arrange(output);
  return y.tensor();
}

}  // namespace

Tensor einsum(Graph& g, std::string_view equation, std::span<const Tensor> operands, const std::string& name) {
  const Equation e = parse(equation);
  if (e.terms.size() != operands.size())
    invalid("Einsum: '" + std::string(equation) + "' has " + std::to_string(e.terms.size()) + " terms for " +
            std::to_string(operands.size()) + " inputs");
  if (operands.size() > 2) unsupported("Einsum of " + std::to_string(operands.size()) + " operands");
  std::vector<Operand> xs;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (e.terms[i].size() != g.shape(operands[i]).size())
      invalid("Einsum: term '" + e.terms[i] + "' names " + std::to_string(e.terms[i].size()) + " dimensions of a " +
              std::to_string(g.shape(operands[i]).size()) + "-D input");
    xs.emplace_back(g, operands[i], e.terms[i], name + "/" + std::to_string(i));
  }
  if (xs.size() == 1) {
    xs[0].sum_all_but(e.output);
    xs[0].arrange(e.output);
    return xs[0].tensor();
  }
  for (std::size_t i = 0; i < 2; ++i) xs[i].sum_all_but(e.output + xs[1 - i].letters());
  return product(g, xs[0], xs[1], e.output, name);
}

}  // namespace porta::onnx::detail
