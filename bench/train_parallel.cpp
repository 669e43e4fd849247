#include "train_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <span>

#include <fmt/core.h>

#include "cli.hpp"
#include "cluster.hpp"
#include "env.hpp"
#include "job.hpp"
#include "porta/error.hpp"
#include "timing.hpp"
#include "train.hpp"

namespace porta::bench {
namespace {

const std::string grad_prefix = "grad:";
const std::string loss_scale = "loss_scale";

struct Parameter {
  std::string name;
  std::size_t numel = 0;
};

// The training step in two graphs, since an executable runs its whole graph: `gradients` is the
// forward and backward pass of a shard (outputs "loss" and "grad:P"; the parameters are variables
// it reads and never assigns), `update` applies the optimizer to variables of the same names and
// initial values from the averaged gradients, its inputs "grad:P". Loss-scaled (f16), the gradients
// are those of the loss times the input "loss_scale", the update graph's variable of that name as
// this step began; the update unscales their average, checks it finite, updates the scale and skips
// a step that overflowed (autodiff::unscale_gradients), so that every rank decides alike.
struct SplitStep {
  Graph gradients, update;
  std::vector<Parameter> params;
  bool loss_scaled = false;
};

SplitStep split_step(const Graph& inference, const std::string& optimizer, const autodiff::TrainingOptions& options) {
  autodiff::TrainingGraph t = training_loss(inference, options);
  Graph& g = t.graph;
  SplitStep s{.loss_scaled = options.precision == DType::f16};
  Tensor loss = g.outputs().back().second;
  if (s.loss_scaled) loss = g.mul(loss, g.input(loss_scale, {1}));
  const std::vector<Tensor> grads = autodiff::gradients(g, loss, t.params);
  std::vector<Tensor> params, inputs;
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    const TensorInfo info = g.info(t.params[i]);
    if (info.desc.dtype != DType::f32)
      throw Error(ErrorCode::Unsupported, fmt::format("--data-parallel: parameter {} is {}; gradients are allreduced "
                                                      "in f32", info.name, to_string(info.desc.dtype)));
    g.output(grad_prefix + info.name, grads[i]);
    s.params.push_back({info.name, static_cast<std::size_t>(info.desc.numel())});
    params.push_back(s.update.variable_bytes(info.name, info.desc.shape, info.desc.dtype, info.data));
    inputs.push_back(s.update.input(grad_prefix + info.name, info.desc.shape));
  }
  if (!s.loss_scaled) {
    apply_optimizer(s.update, params, inputs, optimizer);
  } else {
    const Tensor scale = autodiff::loss_scale_variable(s.update, train_loss_scale);
    const autodiff::ScaledGradients u = autodiff::unscale_gradients(s.update, inputs, scale, train_loss_scale);
    apply_optimizer(s.update, params, u.grads, optimizer, u.finite);
  }
  s.gradients = std::move(g);
  return s;
}

// Parameter indices in the order the backward pass finishes their gradients (the last layer's
// first), grouped into buckets of at most `max_numel` elements; a larger parameter goes alone.
std::vector<std::vector<std::size_t>> buckets(const std::vector<Parameter>& params, std::size_t max_numel) {
  std::vector<std::vector<std::size_t>> out;
  std::size_t filled = 0;
  for (std::size_t i = params.size(); i-- > 0;) {
    if (out.empty() || filled + params[i].numel > max_numel) out.emplace_back(), filled = 0;
    out.back().push_back(i);
    filled += params[i].numel;
  }
  return out;
}

// Seconds of each part of the steps, summed over an epoch.
struct StepSeconds {
  double backward = 0.0;   // the gradient executable (forward and backward), the allreduces started in it
  double allreduce = 0.0;  // waiting for the allreduces after it
  double update = 0.0;     // the update executable's inputs set, its run, the parameters copied back
};

// A bucket's gradients (the loss first in bucket 0), packed as the gradient run reports them, and
// their sum over the ranks; its allreduce starts once the last of its `tensors` has come.
struct Bucket {
  std::vector<float> send, sum;
  std::size_t tensors = 0, missing = 0;
  int handle = -1;
};

// Where an output of the gradient executable goes: its bucket and offset there.
struct Slot {
  std::size_t bucket = 0, offset = 0;
};

struct Replica {
  Executable gradients, update;
  std::vector<Parameter> params;
  std::vector<std::vector<std::size_t>> buckets;
  std::vector<Bucket> packed;  // per bucket
  std::map<std::string, Slot, std::less<>> slots;  // "loss" and "grad:P"
  std::string input;  // the images' input
  bool loss_scaled = false;  // SplitStep's
};

// The buffers of the buckets and the slot of each gradient (and the loss) in them.
void pack(Replica& r) {
  r.packed.resize(r.buckets.size());
  for (std::size_t b = 0; b < r.buckets.size(); ++b) {
    Bucket& bucket = r.packed[b];
    std::size_t size = 0;
    if (b == 0) r.slots["loss"] = {b, size++}, ++bucket.tensors;
    for (const std::size_t i : r.buckets[b]) {
      r.slots[grad_prefix + r.params[i].name] = {b, size};
      size += r.params[i].numel;
      ++bucket.tensors;
    }
    bucket.send.resize(size);
    bucket.sum.resize(size);
  }
}

Replica make_replica(const Graph& inference, const Device& device, const CompileOptions& options,
                     const DataParallelSettings& parallel, const autodiff::TrainingOptions& training) {
  SplitStep s = split_step(inference, parallel.optimizer, training);
  const auto max_numel = static_cast<std::size_t>(parallel.bucket_mib * (1 << 20) / sizeof(float));
  Replica r{.gradients = device.compile(s.gradients, options), .update = device.compile(s.update, options),
            .params = s.params, .buckets = buckets(s.params, std::max<std::size_t>(1, max_numel)),
            .input = inference.info(inference.inputs().at(0)).name, .loss_scaled = s.loss_scaled};
  pack(r);
  return r;
}

// Runs the gradient executable; each bucket's allreduce starts as soon as the run has reported
// its last tensor, so that it overlaps the rest of the backward pass. Every rank's graph reports
// in the same order, so the ranks start the collectives in the same order, as MPI requires. Without
// `overlap`, they start after the run, in the order of the gradients' names.
void run_gradients(Replica& r, Cluster& job, bool overlap) {
  for (Bucket& b : r.packed) b.missing = b.tensors, b.handle = -1;
  const RunOptions options{.output_ready = [&](std::string_view name, std::span<const std::byte> bytes) {
    const auto slot = r.slots.find(name);
    if (slot == r.slots.end()) return;  // the logits
    Bucket& b = r.packed[slot->second.bucket];
    if (bytes.size() > (b.send.size() - slot->second.offset) * sizeof(float))
      throw Error(ErrorCode::Internal, fmt::format("--data-parallel: output {} overflows its bucket", name));
    std::memcpy(b.send.data() + slot->second.offset, bytes.data(), bytes.size());
    if (--b.missing == 0) b.handle = job.start_allreduce(b.send.data(), b.sum.data(), b.send.size());
    job.progress();
  }};
  if (overlap) return r.gradients.run(options);
  r.gradients.run();
  for (const auto& [name, slot] : r.slots) options.output_ready(name, r.gradients.output_bytes(name));
}

// One step: forward and backward on this rank's shard, the loss and gradients summed over the
// ranks bucket by bucket meanwhile, and divided by their count; the same update on every rank.
// The loss of the global batch (the mean of the shards' means).
float train_step(Replica& r, std::span<const float> images, std::span<const float> labels, Cluster& job,
                 bool overlap, StepSeconds& seconds) {
  double start = steady_seconds();
  r.gradients.set_input(r.input, images);
  r.gradients.set_input("labels", labels);
  if (r.loss_scaled) r.gradients.set_input(loss_scale, r.update.variable(loss_scale));
  run_gradients(r, job, overlap);
  seconds.backward += steady_seconds() - start;
  start = steady_seconds();
  for (std::size_t b = 0; b < r.packed.size(); ++b) {
    const std::string what = fmt::format("the allreduce of gradient bucket {} of {} ({} f32)", b + 1,
                                         r.packed.size(), r.packed[b].send.size());
    if (r.packed[b].handle < 0) throw Error(ErrorCode::Internal, "--data-parallel: the run never started " + what);
    job.finish(r.packed[b].handle, what);
  }
  seconds.allreduce += steady_seconds() - start;
  start = steady_seconds();
  const float scale = 1.0f / static_cast<float>(job.size());
  for (Bucket& b : r.packed)
    for (float& x : b.sum) x *= scale;
  for (const Parameter& p : r.params) {
    const Slot& slot = r.slots.find(grad_prefix + p.name)->second;
    const std::span<const float> sum = r.packed[slot.bucket].sum;
    r.update.set_input(grad_prefix + p.name, sum.subspan(slot.offset, p.numel));
  }
  r.update.run();
  for (const Parameter& p : r.params) r.gradients.set_variable_bytes(p.name, r.update.variable_bytes(p.name));
  seconds.update += steady_seconds() - start;
  return r.packed.front().sum.front();
}

// A test hook (bench/test_mpi.sh, case stall-train): PORTA_BENCH_STOP_AT_STEP=k stops this rank
// (SIGSTOP) before its k-th data-parallel step, from 1, so that the others wait for it in an allreduce.
void stop_if_asked(std::size_t step) {
  static const char* const at = std::getenv("PORTA_BENCH_STOP_AT_STEP");
  if (at != nullptr && std::strtoull(at, nullptr, 10) == step) std::raise(SIGSTOP);
}

// Rank `rank`'s rows of a batch: the batch axis leads, so they are one contiguous part.
std::vector<float> shard(const std::vector<float>& batch, int rank, int ranks) {
  const std::size_t part = batch.size() / static_cast<std::size_t>(ranks);
  const auto first = batch.begin() + static_cast<std::ptrdiff_t>(part * static_cast<std::size_t>(rank));
  return {first, first + static_cast<std::ptrdiff_t>(part)};
}

std::uint64_t fnv1a(std::uint64_t hash, std::span<const std::byte> bytes) {
  for (const std::byte b : bytes) hash = (hash ^ static_cast<std::uint64_t>(b)) * 0x100000001b3ull;
  return hash;
}

// Every variable of the update (the parameters and their velocities): one FNV-1a hash of all their
// bytes, which must be rank 0's on every rank, and per variable [sum of +-x, sum of |x|] with a
// fixed sign per element, which a run on another number of ranks can be compared with.
Json check_variables(const Executable& update, Cluster& job) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  Json fingerprints = Json::object();
  for (const std::string& name : update.variable_names()) {
    hash = fnv1a(hash, update.variable_bytes(name));
    double mixed = 0.0, magnitude = 0.0;
    const std::vector<float> values = update.variable(name);
    for (std::size_t i = 0; i < values.size(); ++i) {
      mixed += ((i * 0x9E3779B97F4A7C15ull) >> 63) != 0 ? values[i] : -values[i];
      magnitude += std::abs(values[i]);
    }
    fingerprints[name] = {mixed, magnitude};
  }
  const std::string mine = fmt::format("{:016x}", hash);
  const std::vector<std::string> all = job.gather(mine);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw Error(ErrorCode::Internal, fmt::format("--data-parallel: the variables of rank {} (hash {}) differ from "
                                                   "rank 0's ({}) after training", r, all[r], all[0]));
  return {{"variables_fnv1a", mine}, {"variable_fingerprints", std::move(fingerprints)}};
}

// The data-parallel step of `global` (its batch split across the ranks) timed by epoch as
// run_training times the single-process one, at rank 0 and on every rank alike.
Row data_parallel_row(const Problem& global, const std::string& model, const Target& target,
                      const RunSettings& settings, const TrainArgs& a, Cluster& job) {
  const std::int64_t batch = global.params["batch"].get<std::int64_t>(), ranks = job.size();
  const std::int64_t steps = std::max<std::int64_t>(1, a.train.images / batch);
  Row row = row_for(global, target, settings);
  row.workload = fmt::format("{}, {} ranks", global.workload, ranks);
  if (!target.device) throw Error(ErrorCode::DeviceUnavailable, target.spec + ": " + target.error);
  double start = steady_seconds();
  const DType precision = parse_dtype(a.precision);
  const Problem shard_problem = train_problem(model, batch / ranks, settings.seed, precision, !a.no_dropout);
  // The shard's dropouts draw the global batch's masks for its rows.
  Replica r = make_replica(shard_problem.graph, *target.device, settings.compile, a.parallel,
                           {.precision = precision, .batch_offset = job.rank() * (batch / ranks),
                            .channels_last = trains_channels_last(target.backend)});
  row.compile_s = job.max(steady_seconds() - start);
  const SyntheticData data(global.graph, steps, settings.seed);
  std::vector<std::vector<float>> images, labels;
  for (std::size_t b = 0; b < data.images.size(); ++b) {
    images.push_back(shard(data.images[b], job.rank(), job.size()));
    labels.push_back(shard(data.labels[b], job.rank(), job.size()));
  }
  Json epochs = Json::array(), losses = Json::array();
  StepSeconds seconds;
  for (int e = 0; e < a.train.epochs; ++e) {
    job.barrier();
    seconds = {};
    start = steady_seconds();
    for (std::int64_t s = 0; s < steps; ++s) {
      const auto b = static_cast<std::size_t>(s) % images.size();
      stop_if_asked(losses.size() + 1);
      losses.push_back(train_step(r, images[b], labels[b], job, !a.parallel.no_overlap, seconds));
    }
    epochs.push_back(job.max(steady_seconds() - start));
  }
  const double last = epochs.back().get<double>(), per_step = 1.0 / static_cast<double>(steps);
  row.params.update({{"ranks", ranks}, {"batch_per_rank", batch / ranks}, {"data_parallel", true},
                     {"images", steps * batch}, {"epochs", a.train.epochs}, {"steps_per_epoch", steps},
                     {"epoch_s", epochs}, {"images_per_s", static_cast<double>(steps * batch) / last},
                     {"loss_first", losses.front()}, {"loss_last", losses.back()}, {"loss_curve", losses},
                     {"buckets", r.buckets.size()}, {"bucket_mib", a.parallel.bucket_mib},
                     {"step_backward_s", job.max(seconds.backward * per_step)},
                     {"step_allreduce_s", job.max(seconds.allreduce * per_step)},
                     {"allreduce_overlap", !a.parallel.no_overlap},
                     {"step_update_s", job.max(seconds.update * per_step)},
                     {"planned_peak_bytes", r.gradients.planned_peak_bytes() + r.update.planned_peak_bytes()}});
  row.params.update(check_variables(r.update, job));
  row.timer = "host";
  row.samples = 1;
  row.median_s = row.min_s = row.host_median_s = row.host_min_s = last;
  row.reason = "not verified against ref: the variables are checked identical on every rank, and ctest "
               "mpi.train compares the loss curve with one process's";
  return row;
}

// images/s over `ranks` times the 1-rank baseline's: 1 where the ranks add no overhead. Strong
// scaling, where both train the same global batch, also counts what a rank's smaller batch costs.
void add_efficiency(Row& parallel, const Row& baseline) {
  if (baseline.status != "ok" || parallel.status != "ok") return;
  const double one = baseline.params["images_per_s"].get<double>();
  parallel.params["baseline_images_per_s"] = one;
  parallel.params["baseline_batch"] = baseline.params["batch"];
  parallel.params["scaling_efficiency"] =
      parallel.params["images_per_s"].get<double>() / (one * parallel.params["ranks"].get<double>());
}

// The 1-rank baseline at rank 0 while the others wait, then the data-parallel row; rank 0 keeps both.
std::vector<Row> train_both(const Problem& baseline, const Problem& global, const std::string& model,
                            const Target& target, const RunSettings& settings, const TrainArgs& a, Cluster& job) {
  std::vector<Row> rows;
  if (job.rank() == 0) {
    rows.push_back(run_training(baseline, target, settings, a.train));
    rows.back().params["ranks"] = 1;
  }
  job.barrier();
  Row parallel = data_parallel_row(global, model, target, settings, a, job);
  parallel.params["scaling"] = a.parallel.scaling;
  if (job.rank() != 0) return {};
  add_efficiency(parallel, rows.front());
  rows.push_back(std::move(parallel));
  return rows;
}

// `batch`'s problem with --optimizer's update: the baseline's, and the data-parallel row's global batch.
Problem parallel_problem(const std::string& model, std::int64_t batch, const TrainArgs& a) {
  Problem p = train_problem(model, batch, a.seed, parse_dtype(a.precision), !a.no_dropout);
  for (const char* key : {"learning_rate", "momentum", "weight_decay"}) p.params.erase(key);
  p.params.update(optimizer_params(a.parallel.optimizer));
  return p;
}

}  // namespace

void add_data_parallel_options(CLI::App& cmd, DataParallelSettings& s) {
  cmd.add_flag("--data-parallel", s.enabled,
               "Under mpirun: train each --batch (global or per rank: --scaling) on all the ranks, average the gradients and "
               "check the variables stay identical; rank 0 first runs the 1-rank baseline");
  cmd.add_option("--bucket-mib", s.bucket_mib, "--data-parallel: gradients per allreduce, in MiB")
      ->check(CLI::Range(1e-3, 4096.0))->capture_default_str();
  cmd.add_flag("--no-overlap", s.no_overlap, "--data-parallel: start the allreduces after the backward pass, "
                                              "not during it (to measure what the overlap saves)");
  cmd.add_option("--optimizer", s.optimizer, "--data-parallel: the update, SGD with momentum or AdamW")
      ->check(CLI::IsMember({"sgd", "adamw"}))->capture_default_str();
  cmd.add_option("--scaling", s.scaling, "--data-parallel: strong (--batch is the global batch, split across the "
                                         "ranks) or weak (--batch is each rank's)")
      ->check(CLI::IsMember({"strong", "weak"}))->capture_default_str();
  cmd.add_option("--rank-timeout", s.rank_timeout_s, "--data-parallel: seconds a rank waits for the others")
      ->check(CLI::PositiveNumber)->capture_default_str();
}

int run_data_parallel(const TrainArgs& a, const std::string& command_line) {
  Cluster& job = cluster();
  job.set_timeout(a.parallel.rank_timeout_s);
  const bool weak = a.parallel.scaling == "weak";
  std::vector<std::int64_t> batches;
  for (const std::string& batch : a.batches) {
    if (batch == "fit") throw ArgumentError("--data-parallel takes a --batch, not fit");
    batches.push_back(std::stoll(batch));
    if (!weak && batches.back() % job.size() != 0)
      throw ArgumentError(fmt::format("--data-parallel: the global batch {} does not split evenly across {} ranks",
                                      batch, job.size()));
  }
  if (job.rank() == 0)
    for (const std::string& file : {a.json, a.csv})
      if (!file.empty()) check_writable(file);
  std::vector<std::string> specs;
  for (const std::string& spec : a.devices) specs.push_back(local_device_spec(spec, job.local_rank()));
  const std::vector<Target> targets = open_targets(specs);
  const RunSettings settings{.seed = a.seed};
  std::vector<Row> rows;
  std::vector<DeviceInfo> infos;
  for (const Target& target : targets) {
    if (target.device) infos.push_back(target.device->info());
    for (const std::string& model : a.models)
      for (const std::int64_t batch : batches) {
        const Problem baseline = parallel_problem(model, batch, a);
        const Problem global = weak ? parallel_problem(model, batch * job.size(), a) : baseline;
        for (Row& row : train_both(baseline, global, model, target, settings, a, job)) {
          rows.push_back(std::move(row));
          print_progress(rows.back(), rows.size(), 2 * a.models.size() * a.batches.size() * targets.size());
        }
      }
  }
  Json env = environment(infos, command_line);
  env["suite"] = "train";
  const std::optional<Json> doc = gather_document(job, env, rows);
  if (!doc) return 0;
  fmt::print("\n{} ranks over {}\n", job.size(), job.transport());
  print_train_summary(stdout, rows);
  if (!a.json.empty()) write_json(a.json, *doc);
  if (!a.csv.empty()) write_csv(a.csv, (*doc)["results"]);
  return any_failed(rows) ? 1 : 0;
}

}  // namespace porta::bench
