#pragma once
// Reverse-mode differentiation on the op graph (docs/training.md). The backward pass is appended
// to the same Graph as ordinary nodes, so compile passes, the memory planner and every backend
// apply to it unchanged.
#include <span>
#include <string>
#include <vector>

#include "porta/graph.hpp"

namespace porta::autodiff {

// Appends the nodes computing d(sum(loss * seed)) / d(t) for every t of `wrt` and returns those
// gradients, each with its tensor's shape and dtype. Without a seed, the seed is all ones (the
// gradient of the sum of `loss`). A tensor of `wrt` that `loss` does not depend on gets zeros.
// Throws Unsupported naming the op and node where a node on the way has no backward rule yet.
// Gradients flow only through float tensors: integer and bool tensors on the way (gather's indices,
// compare and where conditions, casts to an integer dtype) stop them, and a `loss` or a tensor of
// `wrt` that is not float is an InvalidArgument.
std::vector<Tensor> gradients(Graph& graph, Tensor loss, std::span<const Tensor> wrt, Tensor seed = {});

// Mean squared error: mean((prediction - target)^2) over every element, shape [1].
Tensor mean_squared_error(Graph& graph, Tensor prediction, Tensor target, std::string name = {});

// Softmax cross-entropy of `logits` against float `labels` of the same shape (one-hot or soft; the
// class axis last), averaged over the rows, shape [1]: one fused, numerically stable op per row
// (log-sum-exp with the maximum taken out), whose gradient is softmax(logits) sum(labels) - labels.
// Integer `labels` (i64 or i32) are class indices, one per row (logits' shape without its last
// axis), which the op reads directly: loss logsumexp(logits) - logits[label], gradient
// softmax(logits) - one_hot(label), no one-hot tensor made. A label outside [0, classes) is an error
// at run time, a negative one too (not counted from the end, so an "ignore" label such as -100 fails).
Tensor softmax_cross_entropy(Graph& graph, Tensor logits, Tensor labels, std::string name = {});

// The gradients of y = conv2d(x, w, p) (before any bias, residual or activation) with respect to x
// and to w, given dy; built from forward convolutions, so every backend runs them with its own
// conv kernels (docs/training.md says how).
Tensor conv2d_backward_data(Graph& graph, Tensor dy, Tensor w, const Conv2dParams& p, const Shape& x_shape);
Tensor conv2d_backward_filter(Graph& graph, Tensor x, Tensor dy, const Conv2dParams& p, const Shape& w_shape);

// Batch normalisation in training mode over channel dim 1: the statistics are those of the batch
// (population variance), built from ordinary ops so that gradients flow through them.
struct BatchStatistics {
  Tensor y;     // normalised, scaled and shifted x
  Tensor mean;  // [C], the batch's
  Tensor var;   // [C], the batch's (biased, as used for normalising)
};
BatchStatistics batchnorm_training(Graph& graph, Tensor x, Tensor scale, Tensor bias, float epsilon = 1e-5f);

// A training copy of an inference graph (porta::models, porta::onnx::load): every float constant that
// an output depends on becomes a variable of the same name, value and dtype (a parameter), and every
// batchnorm normalises with its batch's statistics (batchnorm_training), its running mean and variance
// left unread. Integer constants and those feeding only variables' updates stay constants. Inputs,
// outputs, variables and node names are kept.
// Mixed precision (precision bf16 or f16): the parameters stay f32 variables (master weights, so
// their gradients and the optimiser's state are f32) and are cast down where read, float inputs are
// cast down where read, and the network computes in `precision` (a cast to f32 inside it casts to
// `precision` instead); each batchnorm runs in f32 (statistics of a batch need the range and digits),
// and each float output is cast back to f32, so a loss built on it is f32. f16 needs loss scaling
// (scaled_gradients) to keep small gradients from flushing to zero; bf16 has f32's range.
// batch_offset b: the graph trains samples b, b + 1, ... (dim 0 of its inputs) of a larger batch, a
// shard of a data-parallel step, so each dropout draws the mask the whole batch's graph draws for those
// samples (DropoutParams::batch_offset, added to the node's own): the shards of a step together train
// exactly what one process training the whole batch does. Every dropout's x must lead with the batch.
struct TrainingOptions {
  DType precision = DType::f32;  // f32, bf16 or f16
  std::int64_t batch_offset = 0;  // >= 0
  // Every NCHW conv moved to NHWC before the gradients are taken, with the ops that follow it (as
  // the compiler's layout pass moves them), so that the backward pass is channels-last too: what
  // the cpu backend runs fastest. The graph's inputs and outputs keep their shapes. Only for
  // devices that run NHWC convs (cpu, ref): the others (opencl, cuda, hip) refuse such a graph
  // with Unsupported, saying so; without it the compiler moves each device's convs where it can.
  bool channels_last = false;
};
struct TrainingGraph {
  Graph graph;
  std::vector<Tensor> params;  // the variables made, in the order of the source's tensors
};
TrainingGraph training_graph(const Graph& inference, const TrainingOptions& options = {});

// Dynamic loss scaling for f16 training: the gradients of `loss * scale` with respect to `wrt`,
// divided by the scale in their own dtype (f32 for master weights), and whether all of them are
// finite. The scale is a [1] f32 variable "loss_scale" (so a checkpoint saves it), with the count of
// good steps since it last changed in "loss_scale.good_steps": a step with an inf or NaN halves the
// scale and restarts the count, and `growth_interval` good steps in a row double it (0: the scale
// stays as it is). Pass `finite` to apply_sgd or apply_adamw, which then skip a step whose
// gradients overflowed, leaving the parameters and their state unchanged.
struct LossScaleOptions {
  float initial_scale = 65536.0f;
  std::int64_t growth_interval = 2000;
};
struct ScaledGradients {
  std::vector<Tensor> grads;  // unscaled, in the order of `wrt`
  Tensor finite;              // bool [1]: every element of every gradient is finite
  Tensor scale;               // the "loss_scale" variable, read by this step
};
ScaledGradients scaled_gradients(Graph& graph, Tensor loss, std::span<const Tensor> wrt,
                                 const LossScaleOptions& options = {});
// scaled_gradients in two graphs, for a data-parallel step that sums the scaled gradients over its
// ranks between them: loss_scale_variable makes the "loss_scale" variable (in the graph that will
// update it), and unscale_gradients divides gradients of `loss * scale`, made elsewhere (their sum
// over the ranks, say), by `scale`, checks them finite and updates `scale` and its count of good
// steps, as scaled_gradients does; `scale` must be loss_scale_variable's.
Tensor loss_scale_variable(Graph& graph, const LossScaleOptions& options = {});
ScaledGradients unscale_gradients(Graph& graph, std::span<const Tensor> scaled, Tensor scale,
                                  const LossScaleOptions& options = {});

// One step of SGD as PyTorch defines it, built from ops: g = grad + weight_decay * param,
// v = momentum * velocity + g, param' = param - learning_rate * v. The caller feeds the returned
// tensors back as next step's param and velocity, or lets apply_sgd assign them to variables.
struct SgdOptions {
  float learning_rate = 0.01f;
  float momentum = 0.0f;      // 0: no velocity is kept
  float weight_decay = 0.0f;
};
struct SgdUpdate {
  Tensor param;     // the updated parameter
  Tensor velocity;  // the updated velocity; empty when momentum is 0
};
SgdUpdate sgd_update(Graph& graph, Tensor param, Tensor grad, Tensor velocity, const SgdOptions& options);

// One step of AdamW as PyTorch defines it (decoupled weight decay, bias correction by the step
// count), built from ops: param *= 1 - lr * weight_decay; m = beta1 * m + (1 - beta1) * grad;
// v = beta2 * v + (1 - beta2) * grad^2; param -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t)
// + epsilon). `step` holds t, this update's step count (1 for the first), shape [1].
struct AdamWOptions {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 1e-2f;
};
struct AdamWUpdate {
  Tensor param;
  Tensor m;  // first moment
  Tensor v;  // second moment
};
AdamWUpdate adamw_update(Graph& graph, Tensor param, Tensor grad, Tensor m, Tensor v, Tensor step,
                         const AdamWOptions& options);

// The optimisers driving variables (Graph::variable): each appends one step for every parameter of
// `params` (variables) given its gradient of `grads`, keeps the optimiser's state in variables of its
// own, zero at first, and assigns the new values, so that every run of the graph is one training
// step. SGD's state: "<param>.velocity" (when momentum is not 0). AdamW's: "<param>.m", "<param>.v"
// and one step count, "adamw.step" ([1], f32), so apply_adamw is called once per graph, with
// every parameter. With `apply_if` (bool [1], e.g. ScaledGradients::finite), a run where it is false
// leaves the parameters and the state (AdamW's step count included) as they were.
void apply_sgd(Graph& graph, std::span<const Tensor> params, std::span<const Tensor> grads, const SgdOptions& options,
               Tensor apply_if = {});
void apply_adamw(Graph& graph, std::span<const Tensor> params, std::span<const Tensor> grads,
                 const AdamWOptions& options, Tensor apply_if = {});

// A run counter for Graph::dropout's step: a [1] f32 variable `name`, 0 before the first run, that
// each run increments on the device, so each run of the executable draws new masks and a checkpoint
// resumes the sequence. Returns the variable (this run's step); make one per graph and share it.
Tensor step_counter(Graph& graph, std::string name = "dropout.step");

}  // namespace porta::autodiff
