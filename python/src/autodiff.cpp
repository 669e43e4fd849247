// porta.autodiff: gradients, losses, the training copy of a graph and the optimisers of
// include/porta/autodiff.hpp, so that a Python program trains as a C++ one does (docs/training.md).
#include <pybind11/stl.h>

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
        "class indices, one per row.");
  a.def("training_graph", [](const Graph& inference) {
    autodiff::TrainingGraph t = autodiff::training_graph(inference);
    return py::make_tuple(std::move(t.graph), std::move(t.params));
  }, "inference"_a,
     "(graph, params): a copy whose constants are variables (the params) and whose batchnorms use the batch's "
     "statistics.");
  a.def("apply_sgd", [](Graph& g, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        float learning_rate, float momentum, float weight_decay) {
    autodiff::apply_sgd(g, params, grads,
                        {.learning_rate = learning_rate, .momentum = momentum, .weight_decay = weight_decay});
  }, "graph"_a, "params"_a, "grads"_a, "learning_rate"_a = 0.01f, "momentum"_a = 0.0f, "weight_decay"_a = 0.0f,
     "Each run of the graph is one SGD step (PyTorch's) of every param variable; velocities are variables "
     "'<param>.velocity'.");
  a.def("apply_adamw", [](Graph& g, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          float learning_rate, float beta1, float beta2, float epsilon, float weight_decay) {
    autodiff::apply_adamw(g, params, grads,
                          {.learning_rate = learning_rate, .beta1 = beta1, .beta2 = beta2, .epsilon = epsilon,
                           .weight_decay = weight_decay});
  }, "graph"_a, "params"_a, "grads"_a, "learning_rate"_a = 1e-3f, "beta1"_a = 0.9f, "beta2"_a = 0.999f,
     "epsilon"_a = 1e-8f, "weight_decay"_a = 1e-2f,
     "Each run of the graph is one AdamW step (PyTorch's); state in variables '<param>.m', '<param>.v' and "
     "'adamw.step'. Call once per graph.");
  a.def("step_counter", &autodiff::step_counter, "graph"_a, "name"_a = "dropout.step",
        "A [1] f32 variable, 0 at the first run, that each run increments: the step of Graph.dropout.");
}

}  // namespace porta::python
