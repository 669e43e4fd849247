// The backward ops and the fused loss: every activation's gradient, max pooling's gradient over
// every pooling case (both layouts), softmax cross-entropy with one-hot, soft and integer class
// labels, and its gradient for integer labels.
#include <string>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {
namespace {

void add_activation_backward_cases(std::vector<OpCase>& list, DType t) {
  struct Kind {
    std::string variant;
    ActivationBackwardParams p;
  };
  const Kind kinds[] = {
      {"relu", {.activation = OpKind::Relu}},
      {"clip", {.activation = OpKind::Clip, .clip = {-0.5f, 1.0f}}},
      {"relu6", {.activation = OpKind::Clip, .clip = {0.0f, 6.0f}}},
      {"gelu", {.activation = OpKind::Gelu}},
      {"gelu_tanh", {.activation = OpKind::Gelu, .gelu = {true}}},
      {"hard_sigmoid", {.activation = OpKind::HardSigmoid, .hard_sigmoid = {0.3f, 0.4f}}},
      {"hard_swish", {.activation = OpKind::HardSwish}},
  };
  for (const Kind& k : kinds)
    for (const Shape& shape : {Shape{1}, Shape{7, 19}, Shape{300, 257}})  // x spans [-4, 4): every piece of each
      add_case(list, OpKind::ActivationBackward, k.variant + "_" + std::to_string(shape.back()), t,
               [k, shape](CaseGraph& c) {
                 return c.g.activation_backward(c.scaled(c.input(shape), 4.0f), c.input(shape), k.p);
               });
}

void add_max_pool_backward_cases(std::vector<OpCase>& list, DType t) {
  for (const Layout layout : {Layout::NCHW, Layout::NHWC})
    for (PoolCase pc : pool_cases()) {
      pc.x = stored(layout, pc.x);
      pc.p.layout = layout;
      add_case(list, OpKind::MaxPool2dBackward, pc.variant + (layout == Layout::NHWC ? "_nhwc" : ""), t,
               [pc](CaseGraph& c) {
                 const Tensor x = c.input(pc.x);
                 const Shape y = c.g.shape(c.g.max_pool2d(x, pc.p));
                 return c.g.max_pool2d_backward(x, c.input(y), pc.p);
               });
    }
}

std::string shape_name(const Shape& shape) {
  std::string name;
  for (const auto d : shape) {
    if (!name.empty()) name += 'x';
    name += std::to_string(d);
  }
  return name;
}

// One-hot labels only where every row has several classes, so that labels differ from seed to seed.
void add_softmax_cross_entropy_cases(std::vector<OpCase>& list, DType t) {
  for (const Shape& shape : {Shape{8, 10}, Shape{3, 4, 7}, Shape{64, 1000}}) {
    const std::int64_t classes = shape.back();
    add_case(list, OpKind::SoftmaxCrossEntropy, shape_name(shape) + "_onehot", t, [shape, classes](CaseGraph& c) {
      // One class per row, drawn from the random value of the row's first element.
      const Tensor labels = c.weights_with(shape, [classes, hot = std::int64_t{0}](std::int64_t i, float r) mutable {
        if (i % classes == 0) hot = static_cast<std::int64_t>(r * static_cast<float>(classes));
        return i % classes == hot ? 1.0f : 0.0f;
      });
      return c.g.softmax_cross_entropy(c.scaled(c.input(shape), 8.0f), labels);
    });
  }
  for (const Shape& shape : {Shape{10}, Shape{5, 1}, Shape{8, 10}, Shape{3, 4, 7}, Shape{64, 1000}})
    add_case(list, OpKind::SoftmaxCrossEntropy, shape_name(shape) + "_soft", t, [shape](CaseGraph& c) {
      return c.g.softmax_cross_entropy(c.scaled(c.input(shape), 8.0f), c.g.softmax(c.input(shape), -1));
    });
}

// Logits and their i64 or i32 class labels, one per row: odd class counts, a batch of 1, one class, a
// vector (its label [1]), rows past a GPU thread's share (33 classes) and past a block's (1001).
struct IndexLabelCase {
  Shape logits;
  DType labels;
};
const IndexLabelCase index_label_cases[] = {
    {{8, 10}, DType::i64}, {{1, 7}, DType::i32},  {{3, 4, 7}, DType::i64},   {{2, 1}, DType::i32},
    {{10}, DType::i64},    {{5, 33}, DType::i32}, {{64, 1001}, DType::i32}, {{64, 1001}, DType::i64},
};

std::string index_label_name(const IndexLabelCase& k) {
  return shape_name(k.logits) + "_" + std::string(to_string(k.labels));
}

// The labels: seeded constants in [0, classes) (a negative label is an error, not counted from the end).
Tensor class_labels(CaseGraph& c, const IndexLabelCase& k) {
  const Shape rows = k.logits.size() == 1 ? Shape{1} : Shape(k.logits.begin(), k.logits.end() - 1);
  return c.indices(rows, k.logits.back(), k.labels, false);
}

void add_index_label_cases(std::vector<OpCase>& list, DType t) {
  for (const IndexLabelCase& k : index_label_cases) {
    add_case(list, OpKind::SoftmaxCrossEntropy, index_label_name(k), t, [k](CaseGraph& c) {
      return c.g.softmax_cross_entropy(c.scaled(c.input(k.logits), 8.0f), class_labels(c, k));
    });
    add_case(list, OpKind::SoftmaxCrossEntropyBackward, index_label_name(k), t, [k](CaseGraph& c) {
      const Tensor z = c.scaled(c.input(k.logits), 8.0f), labels = class_labels(c, k);
      return c.g.softmax_cross_entropy_backward(z, labels, c.input(c.g.shape(labels)));
    });
  }
  // Labels computed at run time (an input in [-4, 4) moved to [0, 8) and cast to i64), as a training step's are.
  add_case(list, OpKind::SoftmaxCrossEntropyBackward, "run_time_labels_6x9", t, [](CaseGraph& c) {
    const Tensor z = c.scaled(c.input({6, 9}), 8.0f);
    const Tensor spread = c.g.add(c.spread_input(DType::f32, {6}, 4.0f), c.constant_of(DType::f32, 4.0f));
    const Tensor labels = c.g.cast(spread, DType::i64);
    return c.g.softmax_cross_entropy_backward(z, labels, c.input({6}));
  });
}

}  // namespace

void add_backward_cases(std::vector<OpCase>& list, DType t) {
  add_activation_backward_cases(list, t);
  add_max_pool_backward_cases(list, t);
  add_softmax_cross_entropy_cases(list, t);
  add_index_label_cases(list, t);
}

}  // namespace porta::cases::detail
