// porta.autodiff: gradients, losses, the training copy of a graph and the optimisers of
// include/porta/autodiff.hpp, so that a Python program trains as a C++ one does (docs/training.md).
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "porta/autodiff.hpp"

namespace porta::python {

using namespace pybind11::literals;

void bind_autodiff(py::module_& m) {
  py::module_ a = m.def_submodule(
      "autodiff", "Reverse-mode gradients appended to a Graph, losses, and SGD/AdamW steps as variables' updates.");
  a.def("gradients", [](Graph& g, Tensor loss, const std::vector<Tensor>& wrt, std::optional<Tensor> seed) {
    return autodiff::gradients(g, loss, wrt, seed.value_or(Tensor{}));
  }, "graph"_a, "loss"_a, "wrt"_a, "seed"_a = py::none(),
     "Appends d(sum(loss * seed)) / d(t) for each t of wrt (seed: ones) and returns them; zeros where loss does "
     "not depend on t.");
  a.def("mean_squared_error", &autodiff::mean_squared_error, "graph"_a, "prediction"_a, "target"_a, "name"_a = "",
        "mean((prediction - target)^2), shape [1].");
  a.def("softmax_cross_entropy", &autodiff::softmax_cross_entropy, "graph"_a, "logits"_a, "labels"_a,
        "name"_a = "",
        "Softmax cross-entropy averaged over the rows, shape [1]: float labels of logits' shape, or int64/int32 "
        "class indices, one per row, each in [0, classes) (one outside, a negative one included, fails the run).");
  a.def("training_graph", [](const Graph& inference, const std::string& precision, std::int64_t batch_offset,
                             bool channels_last) {
    autodiff::TrainingGraph t = autodiff::training_graph(
        inference, {.precision = parse_dtype(precision), .batch_offset = batch_offset, .channels_last = channels_last});
    return py::make_tuple(std::move(t.graph), std::move(t.params));
  }, "inference"_a, "precision"_a = "f32", "batch_offset"_a = 0, "channels_last"_a = false,
     "(graph, params): a copy whose constants are variables (the params) and whose batchnorms use the batch's "
     "statistics; precision 'bf16' or 'f16' computes in it around f32 params (mixed precision); batch_offset b: "
     "the graph trains samples b, b + 1, ... of a larger batch (a data-parallel shard), its dropouts drawing "
     "that batch's masks for them; channels_last: every conv moved to NHWC before the gradients are taken, so "
     "that the backward pass is channels-last too (what the cpu backend runs fastest).");
  a.def("scaled_gradients", [](Graph& g, Tensor loss, const std::vector<Tensor>& wrt, float initial_scale,
                               std::int64_t growth_interval) {
    autodiff::ScaledGradients s = autodiff::scaled_gradients(
        g, loss, wrt, {.initial_scale = initial_scale, .growth_interval = growth_interval});
    return py::make_tuple(std::move(s.grads), s.finite, s.scale);
  }, "graph"_a, "loss"_a, "wrt"_a, "initial_scale"_a = 65536.0f, "growth_interval"_a = 2000,
     "(grads, finite, scale): dynamic loss scaling for f16; pass finite as apply_if to skip overflowing steps.");
  a.def("apply_sgd", [](Graph& g, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        float learning_rate, float momentum, float weight_decay, std::optional<Tensor> apply_if) {
    autodiff::apply_sgd(g, params, grads,
                        {.learning_rate = learning_rate, .momentum = momentum, .weight_decay = weight_decay},
                        apply_if.value_or(Tensor{}));
  }, "graph"_a, "params"_a, "grads"_a, "learning_rate"_a = 0.01f, "momentum"_a = 0.0f, "weight_decay"_a = 0.0f,
     "apply_if"_a = py::none(),
     "Each run of the graph is one SGD step (PyTorch's) of every param variable, none where apply_if is false; "
     "velocities are variables '<param>.velocity'.");
  a.def("apply_adamw", [](Graph& g, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          float learning_rate, float beta1, float beta2, float epsilon, float weight_decay,
                          std::optional<Tensor> apply_if) {
    autodiff::apply_adamw(g, params, grads,
                          {.learning_rate = learning_rate, .beta1 = beta1, .beta2 = beta2, .epsilon = epsilon,
                           .weight_decay = weight_decay},
                          apply_if.value_or(Tensor{}));
  }, "graph"_a, "params"_a, "grads"_a, "learning_rate"_a = 1e-3f, "beta1"_a = 0.9f, "beta2"_a = 0.999f,
     "epsilon"_a = 1e-8f, "weight_decay"_a = 1e-2f, "apply_if"_a = py::none(),
     "Each run of the graph is one AdamW step (PyTorch's); state in variables '<param>.m', '<param>.v' and "
     "'adamw.step'. Call once per graph.");
  a.def("step_counter", &autodiff::step_counter, "graph"_a, "name"_a = "dropout.step",
        "A [1] f32 variable, 0 at the first run, that each run increments: the step of Graph.dropout.");
}

}  // namespace porta::python
