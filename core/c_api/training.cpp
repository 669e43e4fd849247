// porta.h: variables, gradients, losses, the training copy of a graph and the optimisers of
// include/porta/autodiff.hpp.
#include <memory>
#include <span>
#include <vector>

#include "core/c_api/handles.hpp"
#include "porta/autodiff.hpp"

using namespace porta::c_api;
using porta::Tensor;

namespace {

// `count` tensors from a C array, which may be NULL only when count is 0.
std::vector<Tensor> tensors_of(const porta_tensor* ts, std::size_t count, const char* what) {
  if (ts == nullptr && count > 0) invalid(std::string(what) + " is NULL");
  std::vector<Tensor> result;
  for (std::size_t i = 0; i < count; ++i) result.push_back(tensor_of(ts[i]));
  return result;
}

// A loss of two operands, as its C function returns it.
template <class Loss>
porta_status loss_of(Loss loss, porta_graph* graph, porta_tensor a, porta_tensor b, const char* name,
                     porta_tensor* out) {
  return guard([&] {
    porta_tensor& result = out_ref(out, "out");
    result = {loss(get(graph, "graph"), tensor_of(a), tensor_of(b), optional_text(name)).id};
  });
}

}  // namespace

extern "C" {

porta_status porta_graph_variable(porta_graph* graph, const char* name, const int64_t* shape, size_t rank,
                                  porta_dtype dtype, const void* data, size_t bytes, porta_tensor* out) {
  return guard([&] {
    if (data == nullptr && bytes > 0) invalid("data is NULL");
    const auto* p = static_cast<const std::byte*>(data);
    auto values = std::make_shared<const std::vector<std::byte>>(p, p + bytes);
    porta_tensor& result = out_ref(out, "out");  // first: a NULL out must leave the graph as it was
    result = {get(graph, "graph").variable_bytes(text(name, "name"), to_shape(shape, rank, "shape"), dtype_of(dtype),
                                                 std::move(values)).id};
  });
}

porta_status porta_graph_assign(porta_graph* graph, porta_tensor variable, porta_tensor value) {
  return guard([&] { get(graph, "graph").assign(tensor_of(variable), tensor_of(value)); });
}

porta_status porta_gradients(porta_graph* graph, porta_tensor loss, const porta_tensor* wrt, size_t count,
                             porta_tensor seed, porta_tensor* grads) {
  return guard([&] {
    const std::vector<Tensor> of = tensors_of(wrt, count, "wrt");
    if (grads == nullptr && count > 0) invalid("grads is NULL");
    const std::vector<Tensor> result =
        porta::autodiff::gradients(get(graph, "graph"), tensor_of(loss), of, tensor_of(seed));
    for (std::size_t i = 0; i < count; ++i) grads[i] = {result[i].id};
  });
}

porta_status porta_mean_squared_error(porta_graph* graph, porta_tensor prediction, porta_tensor target,
                                      const char* name, porta_tensor* out) {
  return loss_of(porta::autodiff::mean_squared_error, graph, prediction, target, name, out);
}

porta_status porta_softmax_cross_entropy_loss(porta_graph* graph, porta_tensor logits, porta_tensor labels,
                                              const char* name, porta_tensor* out) {
  return loss_of(porta::autodiff::softmax_cross_entropy, graph, logits, labels, name, out);
}

porta_status porta_training_graph(const porta_graph* inference, porta_graph** out, porta_tensor* params,
                                  size_t capacity, size_t* count) {
  return porta_training_graph_with_options(inference, nullptr, out, params, capacity, count);
}

porta_training_options porta_training_options_default(void) {
  const porta::autodiff::TrainingOptions d;
  return {sizeof(porta_training_options), static_cast<porta_dtype>(d.precision), d.batch_offset, d.channels_last};
}

porta_status porta_training_graph_with_options(const porta_graph* inference, const porta_training_options* options,
                                               porta_graph** out, porta_tensor* params, size_t capacity,
                                               size_t* count) {
  return guard([&] {
    porta_graph*& result = out_ref(out, "out");
    std::size_t& found = out_ref(count, "count");
    if (params == nullptr && capacity > 0) invalid("params is NULL");
    const porta_training_options o = params_or(options, porta_training_options_default(), "options");
    porta::autodiff::TrainingGraph t = porta::autodiff::training_graph(
        get(inference, "inference"),
        {.precision = dtype_of(o.precision), .batch_offset = o.batch_offset, .channels_last = o.channels_last != 0});
    for (std::size_t i = 0; i < t.params.size() && i < capacity; ++i) params[i] = {t.params[i].id};
    found = t.params.size();
    result = new porta_graph{.graph = std::move(t.graph)};
  });
}

porta_loss_scale_options porta_loss_scale_options_default(void) {
  const porta::autodiff::LossScaleOptions d;
  return {sizeof(porta_loss_scale_options), d.initial_scale, d.growth_interval};
}

porta_status porta_scaled_gradients(porta_graph* graph, porta_tensor loss, const porta_tensor* wrt, size_t count,
                                    const porta_loss_scale_options* options, porta_tensor* grads, porta_tensor* finite,
                                    porta_tensor* scale) {
  return guard([&] {
    const std::vector<Tensor> of = tensors_of(wrt, count, "wrt");
    if (grads == nullptr && count > 0) invalid("grads is NULL");
    const porta_loss_scale_options o = params_or(options, porta_loss_scale_options_default(), "options");
    const porta::autodiff::ScaledGradients s = porta::autodiff::scaled_gradients(
        get(graph, "graph"), tensor_of(loss), of, {.initial_scale = o.initial_scale,
                                                   .growth_interval = o.growth_interval});
    for (std::size_t i = 0; i < count; ++i) grads[i] = {s.grads[i].id};
    if (finite != nullptr) *finite = {s.finite.id};
    if (scale != nullptr) *scale = {s.scale.id};
  });
}

porta_sgd_options porta_sgd_options_default(void) {
  const porta::autodiff::SgdOptions d;
  return {sizeof(porta_sgd_options), d.learning_rate, d.momentum, d.weight_decay, PORTA_NO_TENSOR};
}

porta_adamw_options porta_adamw_options_default(void) {
  const porta::autodiff::AdamWOptions d;
  return {sizeof(porta_adamw_options), d.learning_rate, d.beta1, d.beta2, d.epsilon, d.weight_decay, PORTA_NO_TENSOR};
}

porta_status porta_apply_sgd(porta_graph* graph, const porta_tensor* params, const porta_tensor* grads, size_t count,
                             const porta_sgd_options* options) {
  return guard([&] {
    const porta_sgd_options o = params_or(options, porta_sgd_options_default(), "options");
    porta::autodiff::apply_sgd(get(graph, "graph"), tensors_of(params, count, "params"),
                               tensors_of(grads, count, "grads"),
                               {.learning_rate = o.learning_rate, .momentum = o.momentum,
                                .weight_decay = o.weight_decay},
                               tensor_of(o.apply_if));
  });
}

porta_status porta_apply_adamw(porta_graph* graph, const porta_tensor* params, const porta_tensor* grads,
                               size_t count, const porta_adamw_options* options) {
  return guard([&] {
    const porta_adamw_options o = params_or(options, porta_adamw_options_default(), "options");
    porta::autodiff::apply_adamw(get(graph, "graph"), tensors_of(params, count, "params"),
                                 tensors_of(grads, count, "grads"),
                                 {.learning_rate = o.learning_rate, .beta1 = o.beta1, .beta2 = o.beta2,
                                  .epsilon = o.epsilon, .weight_decay = o.weight_decay},
                                 tensor_of(o.apply_if));
  });
}

porta_status porta_step_counter(porta_graph* graph, const char* name, porta_tensor* out) {
  return guard([&] {
    porta_tensor& result = out_ref(out, "out");
    result = {porta::autodiff::step_counter(get(graph, "graph"), name == nullptr ? "dropout.step" : name).id};
  });
}

porta_status porta_dropout(porta_graph* graph, porta_tensor x, porta_tensor step, float ratio, uint64_t seed,
                           const char* name, porta_tensor* out) {
  porta_dropout_options options = porta_dropout_options_default();
  options.ratio = ratio;
  options.seed = seed;
  return porta_dropout_with_options(graph, x, step, &options, name, out);
}

porta_dropout_options porta_dropout_options_default(void) {
  const porta::DropoutParams d;
  return {sizeof(porta_dropout_options), d.ratio, d.seed, d.mask_dims, d.batch_offset};
}

porta_status porta_dropout_with_options(porta_graph* graph, porta_tensor x, porta_tensor step,
                                        const porta_dropout_options* options, const char* name, porta_tensor* out) {
  return guard([&] {
    porta_tensor& result = out_ref(out, "out");
    const porta_dropout_options o = params_or(options, porta_dropout_options_default(), "options");
    result = {get(graph, "graph").dropout(tensor_of(x), tensor_of(step),
                                          {.ratio = o.ratio, .seed = o.seed, .mask_dims = o.mask_dims,
                                           .batch_offset = o.batch_offset},
                                          optional_text(name)).id};
  });
}

}  // extern "C"
