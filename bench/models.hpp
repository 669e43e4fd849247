#pragma once
// Whole networks as benchmark problems, PyTorch eager beside them, and the batch-fit search.
#include <cstdint>
#include <optional>
#include <string>

#include "problems.hpp"

namespace porta::bench {

// A model from porta::models at its native resolution. FLOPs count the convs and GEMMs (2 per
// multiply-add), the work every framework does; elementwise ops are not counted.
Problem model_problem(const std::string& name, std::int64_t batch, DType dtype, std::uint64_t seed);

// The same network in PyTorch eager mode on the host CPU with `threads` threads, timed under
// `timing` in a python3 child process. A row with status "unsupported" when python3, torch or the
// model is missing.
Row torch_reference(const Problem& model, int threads, const TimingPolicy& timing);
// Its rows' device: "pytorch-cpu:threads=N", beside the cpu device of N threads.
std::string torch_device_spec(int threads);

// Each model at each batch on each target, impl and conv layout (unset: the device's choice;
// a set one is named in the row's impl, e.g. "native/nchw"), with the plan's peak memory in the
// row's params, and PyTorch eager beside every cpu target (same threads) when `torch` is set.
// With `profile`, each porta row is followed by its per-node time breakdown on stdout.
std::vector<Row> run_models(const std::vector<Problem>& models, const std::vector<Target>& targets,
                            const RunSettings& settings, const std::vector<std::optional<Layout>>& layouts,
                            bool torch, bool profile);

// Where one run of `model` spends its time on `device`: the per-node device times of a profiled
// run, summed by kind (convs split into depthwise, 1x1 and kxk), largest first.
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

}  // namespace porta::bench
