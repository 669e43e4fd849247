#pragma once
// Whole networks as benchmark problems, PyTorch eager beside them, and the batch-fit search.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "node_times.hpp"
#include "problems.hpp"

namespace porta::bench {

// A model from porta::models at its native resolution. FLOPs count the convs and GEMMs (2 per
// multiply-add), the work every framework does; elementwise ops are not counted.
// Transformers: BERT at sequence length `seq` (the workload says "bert-base b1 s128").
Problem model_problem(const std::string& name, std::int64_t batch, DType dtype, std::uint64_t seed,
                      std::int64_t seq = 128);

// The same network in PyTorch eager mode on the host CPU with `threads` threads, timed under
// `timing` in a python3 child process. A row with status "unsupported" when python3, torch or the
// model is missing.
Row torch_reference(const Problem& model, int threads, const TimingPolicy& timing);
// The transformers (BERT, ViT) in PyTorch eager on porta's own weights and seeded input
// (bench/scripts/torch_transformers.py), verified against porta's output on `cpu`, whose threads it uses.
Row torch_transformer_reference(const Problem& model, const Device& cpu, const RunSettings& settings);
// Its rows' device: "pytorch-cpu:threads=N", beside the cpu device of N threads.
std::string torch_device_spec(int threads);
// Runs bench/scripts/<name>.py (embedded in porta-bench) under python3 with `arguments`, the
// threads and the timing policy; returns its output, whose last line is JSON.
std::string run_script(std::string_view name, const std::string& arguments, int threads, const TimingPolicy& timing);

// The same network in ONNX Runtime's CPU provider (ort_rows.cpp): porta's graph exported to ONNX,
// run by tools/ort on `cpu`'s thread count, timed under `timing` on the seeded inputs porta gets,
// and verified against porta's output on `cpu`. An "unsupported" row saying why when ORT or node is
// missing or the graph has no ONNX form. With `profile`, ORT's own per-node profile follows on stdout.
Row ort_reference(const Problem& model, const Device& cpu, const RunSettings& settings, bool profile);
// Its rows' device: "onnxruntime-cpu:threads=N", beside the cpu device of N threads.
std::string ort_device_spec(int threads);

// The frameworks timed beside porta on cpu targets.
struct References {
  bool torch = true;  // PyTorch eager
  bool ort = true;    // ONNX Runtime
};
// The reference rows for `model` beside `target` (none unless it is a cpu device), each printed to
// stderr as it finishes.
std::vector<Row> reference_rows(const Problem& model, const Target& target, const RunSettings& settings,
                                References which, bool profile);

// Each model at each batch on each target, impl and conv layout (unset: the device's choice;
// a set one is named in the row's impl, e.g. "native/nchw"), with the plan's peak memory in the
// row's params, and the `references` beside every cpu target (same threads).
// With `profile`, each porta row is followed by its per-node time breakdown on stdout, and ORT's by its own.
std::vector<Row> run_models(const std::vector<Problem>& models, const std::vector<Target>& targets,
                            const RunSettings& settings, const std::vector<std::optional<Layout>>& layouts,
                            References references, bool profile);

// The per-node device times of `model` on `device`, the mean of `runs` profiled runs after a first one.
std::vector<ort::NodeTime> profiled_node_times(const Problem& model, const Device& device,
                                               const CompileOptions& options, int runs);
// Where `model` spends its time on `device`: profiled_node_times summed by kind (ort::by_kind).
void print_model_profile(std::FILE* out, const Problem& model, const Device& device, const CompileOptions& options);

// images/s, latency and planned peak memory, one line per row.
void print_model_summary(std::FILE* out, const std::vector<Row>& rows);

struct Fit {
  std::int64_t batch = 0;        // the largest batch that fits; 0 when not even batch 1 does
  MemoryEstimate at_batch;       // the plan at that batch (or at batch 1 when none fits)
  std::uint64_t budget = 0;
};

// The largest batch (up to `max_batch`) whose planned peak fits in `budget` bytes on `device`:
// plans only, allocates nothing.
Fit fit_batch(const std::string& model, const Device& device, DType dtype, std::uint64_t budget,
              std::int64_t max_batch = std::int64_t{1} << 20);
// The same search over any plan that grows with the batch (a training step's: train.hpp).
using BatchPlan = std::function<MemoryEstimate(std::int64_t batch)>;
Fit fit_batch(const BatchPlan& plan, std::uint64_t budget, std::int64_t max_batch = std::int64_t{1} << 20);

}  // namespace porta::bench
