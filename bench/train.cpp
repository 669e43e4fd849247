#include "train.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "cli.hpp"
#include "env.hpp"
#include "porta/models.hpp"
#include "timing.hpp"
#include "train_parallel.hpp"

namespace porta::bench {
namespace {

constexpr autodiff::SgdOptions sgd = train_sgd;

std::vector<float> uniform(std::int64_t n, float scale, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// 3x32x32 images -> gemm 3072x512 -> batchnorm -> tanh -> gemm 512x10: the smallest network the
// train suite times, beside the CNNs. Without the batchnorm ("mlp-nobn"), a batch split across
// data-parallel ranks trains exactly as the whole batch does (a batchnorm takes each rank's statistics),
// and `dropout` puts a dropout of 0.2 before the second gemm, which the ranks' shards draw as the
// whole batch does (autodiff::TrainingOptions::batch_offset).
Graph mlp(std::int64_t batch, std::uint64_t seed, bool batchnorm, bool dropout) {
  constexpr std::int64_t pixels = 3 * 32 * 32, hidden = 512, classes = 10;
  std::mt19937_64 rng(seed);
  Graph g;
  const Tensor x = g.flatten(g.input("input", {batch, 3, 32, 32}));
  const auto weight = [&](const char* name, Shape shape, std::int64_t fan_in) {
    return g.constant(name, shape, uniform(shape[0] * shape[1], 1.0f / std::sqrt(static_cast<float>(fan_in)), rng));
  };
  const auto filled = [&](const char* name, std::int64_t n, float value) {
    return g.constant(name, {n}, std::vector<float>(static_cast<std::size_t>(n), value));
  };
  const Tensor h = g.gemm(x, weight("fc1.weight", {pixels, hidden}, pixels), {}, filled("fc1.bias", hidden, 0.0f), "fc1");
  const Tensor bn = !batchnorm ? h : g.batchnorm(h, filled("bn.weight", hidden, 1.0f), filled("bn.bias", hidden, 0.0f),
                                filled("bn.running_mean", hidden, 0.0f), filled("bn.running_var", hidden, 1.0f), {}, "bn");
  Tensor hidden_out = g.tanh(bn);
  if (dropout) hidden_out = g.dropout(hidden_out, autodiff::step_counter(g), {.ratio = 0.2f, .seed = seed}, "dropout");
  const Tensor y = g.gemm(hidden_out, weight("fc2.weight", {hidden, classes}, hidden), {},
                          filled("fc2.bias", classes, 0.0f), "fc2");
  g.output("logits", y);
  return g;
}

// The shape of the class labels of `logits`: one per row, the class axis (the last) dropped.
Shape label_shape(const Shape& logits) { return Shape(logits.begin(), logits.end() - 1); }

// training_loss's graph with the gradients of every weight and the optimizer driving them as variables;
// in f16 the gradients are loss-scaled and a step whose gradients overflowed is skipped.
Graph training_step(const Graph& inference, const std::string& optimizer = "sgd", DType precision = DType::f32,
                    bool channels_last = false) {
  autodiff::TrainingGraph t = training_loss(inference, {.precision = precision, .channels_last = channels_last});
  Graph& g = t.graph;
  const Tensor loss = g.outputs().back().second;
  if (precision != DType::f16) {
    apply_optimizer(g, t.params, autodiff::gradients(g, loss, t.params), optimizer);
  } else {
    const autodiff::ScaledGradients s = autodiff::scaled_gradients(g, loss, t.params, train_loss_scale);
    apply_optimizer(g, t.params, s.grads, optimizer, s.finite);
  }
  return std::move(g);
}

// The step of a train problem on a backend: its inference graph, optimizer and precision.
Graph training_step(const Problem& problem, const std::string& backend) {
  return training_step(problem.graph, problem.params["optimizer"].get<std::string>(),
                       parse_dtype(problem.params.value("precision", std::string("f32"))),
                       trains_channels_last(backend));
}

}  // namespace

bool trains_channels_last(const std::string& backend) { return backend == "cpu"; }

autodiff::TrainingGraph training_loss(const Graph& inference, const autodiff::TrainingOptions& options) {
  autodiff::TrainingGraph t = autodiff::training_graph(inference, options);
  Graph& g = t.graph;
  const Tensor logits = g.outputs().at(0).second;
  if (g.shape(logits).empty())
    throw Error(ErrorCode::ShapeMismatch, "porta-bench train: the network's output is a scalar, not class logits");
  const Tensor labels = g.input("labels", label_shape(g.shape(logits)), DType::i64);
  const Tensor loss = autodiff::softmax_cross_entropy(g, logits, labels);
  g.output("loss", loss);
  return t;
}

SyntheticData::SyntheticData(const Graph& step, std::int64_t steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Shape logits = step.shape(step.outputs().at(0).second);
  const std::int64_t image_numel = TensorDesc{DType::f32, step.shape(step.inputs().at(0))}.numel();
  const std::int64_t rows = TensorDesc{DType::f32, label_shape(logits)}.numel();
  std::uniform_int_distribution<std::int64_t> label(0, logits.back() - 1);
  for (std::int64_t b = 0; b < std::min<std::int64_t>(steps, 4); ++b) {
    images.push_back(uniform(image_numel, 1.0f, rng));
    std::vector<float> classes(static_cast<std::size_t>(rows));
    for (float& c : classes) c = static_cast<float>(label(rng));
    labels.push_back(std::move(classes));
  }
}

namespace {

// Runs the epochs on `exe`, recording them in `row`.
void time_epochs(Row& row, Executable& exe, const Graph& step, std::int64_t steps, std::int64_t batch,
                 const RunSettings& settings, const TrainSettings& train) {
  const SyntheticData data(step, steps, settings.seed);
  const std::string input = step.info(step.inputs().at(0)).name;
  Json epochs = Json::array();
  std::vector<float> losses;
  for (int e = 0; e < train.epochs; ++e) {
    const double start = steady_seconds();
    for (std::int64_t s = 0; s < steps; ++s) {
      const auto b = static_cast<std::size_t>(s) % data.images.size();
      exe.set_input(input, data.images[b]);
      exe.set_input("labels", data.labels[b]);
      exe.run();
      if (s == 0 || s == steps - 1) losses.push_back(exe.output("loss")[0]);
    }
    epochs.push_back(steady_seconds() - start);
  }
  const double last = epochs.back().get<double>();
  row.params["epoch_s"] = epochs;
  row.params["images_per_s"] = static_cast<double>(steps * batch) / last;
  row.params["loss_first"] = losses.front();
  row.params["loss_last"] = losses.back();
  row.timer = "host";
  row.samples = 1;
  row.median_s = row.min_s = row.host_median_s = row.host_min_s = last;
}

// A node's arithmetic in GFLOP where it is a convolution or a matrix product (0 otherwise).
double node_gflop(const Graph& g, const Node& n) {
  const Shape& y = g.shape(n.output);
  if (n.op == OpKind::Conv2d) {
    const Shape& w = g.shape(n.inputs.at(1));
    return 2e-9 * static_cast<double>(TensorDesc{DType::f32, y}.numel() * w[1] * w[2] * w[3]);
  }
  if (n.op == OpKind::MatMul || n.op == OpKind::Gemm) {
    const Shape& a = g.shape(n.inputs.at(0));
    const bool trans_a = n.op == OpKind::Gemm && std::get<GemmParams>(n.params).trans_a;
    return 2e-9 * static_cast<double>(TensorDesc{DType::f32, y}.numel() * (trans_a ? a[a.size() - 2] : a.back()));
  }
  return 0.0;
}

// The last run's heaviest nodes: op, shapes, ms and GFLOP/s, then the time by kind of node.
void print_step_profile(std::FILE* out, const Graph& step, const Executable& exe) {
  std::vector<NodeTiming> times = exe.node_timings();
  std::map<std::string, const Node*> by_name;
  for (const Node& n : step.nodes()) by_name[n.name] = &n;
  std::map<std::string, double> by_kind;
  double total = 0;
  for (const NodeTiming& t : times) by_kind[std::string(to_string(t.op))] += t.seconds, total += t.seconds;
  std::ranges::sort(times, [](const NodeTiming& a, const NodeTiming& b) { return a.seconds > b.seconds; });
  fmt::print(out, "\nthe step's heaviest nodes (of {:.1f} ms):\n", total * 1e3);
  for (std::size_t i = 0; i < std::min<std::size_t>(times.size(), 30); ++i) {
    const NodeTiming& t = times[i];
    const auto it = by_name.find(t.name);
    std::string shapes;
    double gflop = 0;
    if (it != by_name.end()) {
      for (const Tensor in : it->second->inputs) shapes += fmt::format("{} ", fmt::join(step.shape(in), "x"));
      shapes += fmt::format("-> {}", fmt::join(step.shape(it->second->output), "x"));
      gflop = node_gflop(step, *it->second);
    }
    if (shapes.size() > 100) shapes = shapes.substr(0, 97) + "...";
    fmt::print(out, "  {:8.2f} ms {:>7} {:<14} {:<24} {}\n", t.seconds * 1e3,
               gflop > 0 ? fmt::format("{:.1f}", gflop / t.seconds) : "", to_string(t.op), t.name, shapes);
  }
  fmt::print(out, "by kind:");
  for (const auto& [kind, s] : by_kind) fmt::print(out, " {} {:.1f} ms;", kind, s * 1e3);
  fmt::print(out, "\n");
}

// The bytes of the trainable parameters' gradients: what a data-parallel step allreduces.
std::uint64_t gradient_bytes(const Graph& inference) {
  const autodiff::TrainingGraph t = autodiff::training_graph(inference);
  std::uint64_t bytes = 0;
  for (const Tensor p : t.params) bytes += t.graph.desc(p).bytes();
  return bytes;
}

}  // namespace

void apply_optimizer(Graph& g, std::span<const Tensor> params, std::span<const Tensor> grads,
                     const std::string& optimizer, Tensor apply_if) {
  if (optimizer == "sgd") return autodiff::apply_sgd(g, params, grads, sgd, apply_if);
  if (optimizer == "adamw") return autodiff::apply_adamw(g, params, grads, train_adamw, apply_if);
  throw ArgumentError(fmt::format("unknown optimizer '{}' (sgd, adamw)", optimizer));
}

Json optimizer_params(const std::string& optimizer) {
  if (optimizer == "adamw")
    return {{"optimizer", "adamw"}, {"learning_rate", train_adamw.learning_rate}, {"beta1", train_adamw.beta1},
            {"beta2", train_adamw.beta2}, {"epsilon", train_adamw.epsilon}, {"weight_decay", train_adamw.weight_decay}};
  return {{"optimizer", "sgd"}, {"learning_rate", sgd.learning_rate}, {"momentum", sgd.momentum},
          {"weight_decay", sgd.weight_decay}};
}

std::vector<std::string> train_model_names() {
  std::vector<std::string> names{"mlp", "mlp-nobn"};
  for (const models::ModelInfo& m : models::available()) names.push_back(m.name);
  return names;
}

Problem train_problem(const std::string& model, std::int64_t batch, std::uint64_t seed, DType precision,
                      bool regularize) {
  const std::string suffix = precision == DType::f32 ? "" : " " + std::string(to_string(precision));
  Problem p{.op = "train", .kind = OpKind::Gemm, .workload = fmt::format("{} b{}{}", model, batch, suffix)};
  // mlp keeps no dropout, as PyTorch's side of it (bench/scripts/torch_train.py) has none.
  p.graph = model.starts_with("mlp") ? mlp(batch, seed, model == "mlp", model == "mlp-nobn" && regularize)
                                     : models::build(model, {.batch = batch, .seed = seed, .training = regularize});
  const Shape& input = p.graph.shape(p.graph.inputs().at(0));
  p.params = {{"model", model}, {"batch", batch}, {"resolution", input.back()}, {"dropout", regularize}};
  p.params.update(optimizer_params("sgd"));
  p.params.update({{"loss", "softmax cross-entropy to integer labels"}, {"seed", seed},
                   {"gradient_bytes", gradient_bytes(p.graph)}, {"precision", to_string(precision)}});
  if (precision == DType::f16)
    p.params["loss_scale"] = {{"initial", train_loss_scale.initial_scale},
                              {"growth_interval", train_loss_scale.growth_interval}};
  return p;
}

Row run_training(const Problem& problem, const Target& target, const RunSettings& settings,
                 const TrainSettings& train) {
  Row row = row_for(problem, target, settings);
  const std::int64_t batch = problem.params["batch"].get<std::int64_t>();
  const std::int64_t steps = std::max<std::int64_t>(1, train.images / batch);
  row.params["images"] = steps * batch;
  row.params["epochs"] = train.epochs;
  if (!target.device) {
    row.status = "failed";
    row.reason = target.error;
    return row;
  }
  try {
    const double start = steady_seconds();
    // Unsupported where an op has no backward rule
    const Graph step = training_step(problem, target.backend);
    row.params["layout"] = trains_channels_last(target.backend) ? "nhwc" : "as built";
    CompileOptions options = settings.compile;
    options.profile = train.profile;
    Executable exe = target.device->compile(step, options);
    row.compile_s = steady_seconds() - start;
    row.params["planned_peak_bytes"] = exe.planned_peak_bytes();
    row.params["steps_per_epoch"] = steps;
    time_epochs(row, exe, step, steps, batch, settings, train);
    if (train.profile) print_step_profile(stdout, step, exe);
    row.reason = "not verified: tests/test_training.cpp checks training steps on each device against ref";
  } catch (...) {
    record_exception(row, std::current_exception());
  }
  return row;
}

Fit fit_training_batch(const std::string& model, const Device& device, std::uint64_t budget, std::uint64_t seed,
                       std::int64_t max_batch, DType precision, bool regularize) {
  return fit_batch([&](std::int64_t batch) {
    return device.estimate_memory(
        training_step(train_problem(model, batch, seed, precision, regularize), device.info().backend));
  }, budget, max_batch);
}

std::vector<Problem> train_problems(std::uint64_t seed) {
  return {train_problem("mlp", 32, seed), train_problem("mlp", 128, seed), train_problem("resnet50", 8, seed),
          train_problem("efficientnet-b0", 8, seed)};
}

namespace {

// PyTorch's last epoch over porta's, where `r` is a cpu row that train_with_references followed by
// PyTorch's of the same problem: above 1, porta is faster.
std::string torch_ratio(const std::vector<Row>& rows, std::size_t i) {
  const Row& r = rows[i];
  if (r.backend != "cpu" || i + 1 >= rows.size() || !r.median_s) return {};
  const Row& torch = rows[i + 1];
  if (torch.backend != "pytorch" || torch.workload != r.workload || !torch.median_s) return {};
  return fmt::format("{:.2f}x", *torch.median_s / *r.median_s);
}

}  // namespace

void print_train_summary(std::FILE* out, const std::vector<Row>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.op != "train") continue;
    const bool ok = r.status == "ok";
    const auto number = [&](const char* key, const char* format, double scale = 1.0) {
      return ok && r.params.contains(key) ? fmt::format(fmt::runtime(format), r.params[key].get<double>() * scale) : std::string();
    };
    cells.push_back({r.workload, r.device, ok ? fmt::format("{:.3f}", *r.median_s) : r.status,
                     number("images_per_s", "{:.1f}"), torch_ratio(rows, i),
                     number("planned_peak_bytes", "{:.1f}", 1.0 / (1 << 20)),
                     ok ? fmt::format("{:.4f} -> {:.4f}", r.params["loss_first"].get<double>(),
                                      r.params["loss_last"].get<double>())
                        : single_line(r.reason).substr(0, 100)});
  }
  print_text_table(out, {"model", "device", "last epoch s", "images/s", "PyTorch s / porta s", "planned peak MiB",
                         "loss / reason"},
                   cells, {false, false, true, true, true, true, false});
}

CLI::App* add_train_command(CLI::App& app, TrainArgs& a) {
  const std::vector<std::string> known = train_model_names();
  auto* cmd = app.add_subcommand("train", "Train networks on synthetic data: the last epoch's time, images/s, "
                                          "the planned peak memory of a step");
  cmd->add_option("--model", a.models, fmt::format("Models, comma-separated: {}", fmt::join(known, ", ")))
      ->required()->delimiter(',')->check(CLI::IsMember(known));
  cmd->add_option("--batch", a.batches, "Batch sizes, comma-separated; fit: the largest whose planned training step "
                                       "fits --memory")->delimiter(',')
      ->check(CLI::IsMember({"fit"}) | CLI::Range(std::int64_t{1}, std::int64_t{1} << 30))->capture_default_str();
  cmd->add_option("--memory", a.memory, "--batch fit's budget in bytes (default: each device's free memory)")
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  cmd->add_option("--device", a.devices, "Device specs, comma-separated or repeated (default: every device)");
  cmd->add_option("--images", a.train.images, "Images per epoch")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))->capture_default_str();
  cmd->add_option("--epochs", a.train.epochs, "Epochs; the last one is timed")->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--precision", a.precision, "f32, or mixed precision: bf16 or f16 (loss-scaled) around f32 "
                                             "master weights")->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->capture_default_str();
  cmd->add_flag("--no-torch", a.no_torch, "Skip PyTorch's training step beside each cpu device (always skipped "
                                          "in mixed precision: it trains in f32)");
  cmd->add_flag("--no-dropout", a.no_dropout, "Train without the dropout and stochastic depth torchvision trains "
                                            "the model with (porta's and PyTorch's side alike)");
  cmd->add_flag("--profile", a.train.profile, "Print the heaviest nodes of each network's last step");
  cmd->add_option("--seed", a.seed, "Seed of the weights and the synthetic data")->capture_default_str();
  cmd->add_option("--json", a.json, "Write the results as JSON (schema porta-bench/1)");
  cmd->add_option("--csv", a.csv, "Write the results as CSV");
  add_data_parallel_options(*cmd, a.parallel);
  return cmd;
}

namespace {

// `model` at --batch fit on `target`: the largest batch whose planned step fits the budget, printed
// and kept in the problem's params; batch 1 (whose row then fails) where the device did not open.
Problem fitted_problem(const TrainArgs& a, const std::string& model, const Target& target) {
  const DType precision = parse_dtype(a.precision);
  if (!target.device) return train_problem(model, 1, a.seed, precision, !a.no_dropout);
  const DeviceInfo& info = target.device->info();
  const std::uint64_t budget = a.memory > 0 ? a.memory : info.memory_free;
  if (budget == 0)
    throw Error(ErrorCode::InvalidArgument, info.spec + " does not report its free memory: give --memory BYTES");
  const Fit fit =
      fit_training_batch(model, *target.device, budget, a.seed, std::int64_t{1} << 16, precision, !a.no_dropout);
  constexpr double mib = 1 << 20;
  if (fit.batch == 0)
    throw Error(ErrorCode::OutOfMemory, fmt::format("{} on {}: a training step at batch 1 plans {:.1f} MiB, more "
                                                    "than the budget of {:.1f} MiB", model, info.spec,
                                                    fit.at_batch.peak_bytes() / mib, budget / mib));
  fmt::print("{} on {}: batch {} fits a budget of {:.1f} MiB, its training step planning {:.1f} MiB\n", model,
             info.spec, fit.batch, budget / mib, fit.at_batch.peak_bytes() / mib);
  Problem p = train_problem(model, fit.batch, a.seed, precision, !a.no_dropout);
  p.params["batch_fit"] = {{"budget_bytes", budget}, {"planned_peak_bytes", fit.at_batch.peak_bytes()}};
  return p;
}

// The problems on `target`: each model at each --batch, "fit" resolved for the target.
std::vector<Problem> problems_on(const TrainArgs& a, const Target& target) {
  std::vector<Problem> problems;
  for (const std::string& model : a.models)
    for (const std::string& batch : a.batches)
      problems.push_back(batch == "fit" ? fitted_problem(a, model, target)
                                        : train_problem(model, std::stoll(batch), a.seed, parse_dtype(a.precision),
                                                        !a.no_dropout));
  return problems;
}

}  // namespace

int run_train(const TrainArgs& a, const std::string& command_line) {
  if (a.parallel.enabled) return run_data_parallel(a, command_line);
  if (a.parallel.optimizer != "sgd")
    throw ArgumentError("--optimizer " + a.parallel.optimizer + " is for --data-parallel; train times SGD");
  for (const std::string& file : {a.json, a.csv})
    if (!file.empty()) check_writable(file);
  const std::vector<Target> targets = open_targets(a.devices);
  RunSettings settings{.seed = a.seed};
  std::vector<Row> rows;
  std::vector<DeviceInfo> infos;
  std::size_t done = 0;
  const std::size_t total = a.models.size() * a.batches.size() * targets.size();
  for (const Target& target : targets) {
    if (target.device) infos.push_back(target.device->info());
    for (const Problem& problem : problems_on(a, target)) {
      ++done;
      const TrainSettings train{a.train.images, a.train.epochs, !a.no_torch && a.precision == "f32", a.train.profile};
      for (Row& row : train_with_references(problem, target, settings, train)) {
        rows.push_back(std::move(row));
        print_progress(rows.back(), done, total);
      }
    }
  }
  fmt::print("\n");
  print_train_summary(stdout, rows);
  if (!a.json.empty()) write_json(a.json, environment(infos, command_line), rows);
  if (!a.csv.empty()) write_csv(a.csv, rows);
  return any_failed(rows) ? 1 : 0;
}

}  // namespace porta::bench
