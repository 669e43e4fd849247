#pragma once
// porta-bench train and the `train` suite: training steps (forward, backward, SGD update, all in
// the graph, the weights staying on the device) of a network on synthetic data, timed by epoch as
// the GPU-buying guides do: the second epoch's time (the first pays for warm-up), images/s and
// the planned peak memory of a step.
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "models.hpp"
#include "porta/autodiff.hpp"
#include "problems.hpp"
#include "train_parallel.hpp"

namespace porta::bench {

struct TrainSettings {
  std::int64_t images = 2048;  // per epoch, rounded down to whole batches (at least one)
  int epochs = 2;
  bool torch = true;  // PyTorch's training step beside each cpu device (train_with_references)
  bool profile = false;  // print the heaviest nodes of the last step (CompileOptions::profile)
};

inline constexpr autodiff::SgdOptions train_sgd{.learning_rate = 0.01f, .momentum = 0.9f, .weight_decay = 5e-4f};
inline constexpr autodiff::AdamWOptions train_adamw{};  // --data-parallel --optimizer adamw
inline constexpr autodiff::LossScaleOptions train_loss_scale{};  // --precision f16

// The update of `params` from `grads` appended to `g`: "sgd" (train_sgd) or "adamw" (train_adamw),
// skipped in a run where `apply_if` (when given) is false.
void apply_optimizer(Graph& g, std::span<const Tensor> params, std::span<const Tensor> grads,
                     const std::string& optimizer, Tensor apply_if = {});
// `optimizer`'s name and hyper-parameters as a train problem's params.
Json optimizer_params(const std::string& optimizer);

// The inference graph made trainable (autodiff::training_graph) with its loss, output "loss" after
// the network's: softmax cross-entropy to integer class "labels", an input.
// `options.precision` bf16 or f16: the network in mixed precision, the loss in f32; `batch_offset`: a
// data-parallel rank's shard (autodiff::TrainingOptions).
// Where a training graph is made channels-last before its gradients are taken
// (autodiff::TrainingOptions::channels_last): on the cpu backend, whose NHWC convolutions and their
// gradients are its fast ones.
bool trains_channels_last(const std::string& backend);
autodiff::TrainingGraph training_loss(const Graph& inference, const autodiff::TrainingOptions& options = {});

// A few batches of random images with random class labels, for the first input and the first
// output (the logits) of `step`, cycled through an epoch.
struct SyntheticData {
  std::vector<std::vector<float>> images, labels;
  SyntheticData(const Graph& step, std::int64_t steps, std::uint64_t seed);
};

// "mlp" and "mlp-nobn" (small networks of ops that train today, defined in train.cpp) and porta::models' networks.
std::vector<std::string> train_model_names();

// `model` at `batch` as a problem of op "train" whose graph is the inference network, with the
// dropout and stochastic depth torchvision trains it with unless `regularize` is false (params
// "dropout"), trained in `precision` (f32, or bf16/f16 around f32 master weights); its training
// graph is made per run (run_training). Throws NotFound for an unknown model.
Problem train_problem(const std::string& model, std::int64_t batch, std::uint64_t seed, DType precision = DType::f32,
                      bool regularize = true);

// One row: the last epoch's time as median_s, with the epoch times, images/s, the planned peak and
// the first and last losses in params. "unsupported", naming the op, where the network has an op
// without a backward rule; never throws for device trouble.
Row run_training(const Problem& problem, const Target& target, const RunSettings& settings,
                 const TrainSettings& train);

// The same experiment in PyTorch eager on the host CPU with `threads` threads
// (bench/scripts/torch_train.py, torch_train.cpp): its own initial weights, the same batch, loss
// and SGD settings. "unsupported" saying why where python3, torch or the model is missing.
Row torch_training(const Problem& problem, int threads, const TrainSettings& train);
// run_training's row, and on a cpu device PyTorch's beside it unless `train.torch` is off.
std::vector<Row> train_with_references(const Problem& problem, const Target& target, const RunSettings& settings,
                                       const TrainSettings& train);

// The largest batch (up to `max_batch`) whose training step (training_step's graph of `model`)
// has a planned peak within `budget` bytes on `device`: plans only, allocates nothing.
Fit fit_training_batch(const std::string& model, const Device& device, std::uint64_t budget, std::uint64_t seed,
                       std::int64_t max_batch = std::int64_t{1} << 16, DType precision = DType::f32,
                       bool regularize = true);

// The `train` suite's problems: what trains today, and the CNNs the guides train.
std::vector<Problem> train_problems(std::uint64_t seed);

// Model, device, epoch seconds, images/s, planned peak and loss, one line per train row.
void print_train_summary(std::FILE* out, const std::vector<Row>& rows);

// porta-bench train --model M --batch N|fit [--memory BYTES] --device D --images 2048 --epochs 2
struct TrainArgs {
  std::vector<std::string> models;
  std::vector<std::string> batches{"32"};  // numbers, or "fit": fit_training_batch on each device
  std::uint64_t memory = 0;                // fit's budget; 0: the device's free memory
  std::vector<std::string> devices;
  std::uint64_t seed = 42;
  TrainSettings train;
  bool no_torch = false;
  std::string precision = "f32";  // --precision: f32, bf16 or f16
  bool no_dropout = false;  // train_problem's regularize off, on both sides
  std::string json, csv;
  DataParallelSettings parallel;
};
CLI::App* add_train_command(CLI::App& app, TrainArgs& args);
int run_train(const TrainArgs& args, const std::string& command_line);

}  // namespace porta::bench
