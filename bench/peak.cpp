#include "peak.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

#include <fmt/core.h>

namespace porta::bench {
namespace {

constexpr const char* stream_op = "stream";
constexpr const char* launch_op = "launch";
constexpr const char* fma_op = "fma";
constexpr const char* copy_op = "device-copy";
constexpr const char* gemm_probe_prefix = "peak/";
constexpr float stream_scalar = 0.4f;  // BabelStream's

// One stream kernel over `n` elements. porta has no fused multiply-add op, so triad (a = b + s*c)
// is two kernels, Mul then Add, moving 5 arrays where BabelStream's single kernel moves 3; its
// bytes are counted as BabelStream counts them, so its GB/s reads low, and it is left out of the
// bandwidth ceiling.
Problem stream_problem(const std::string& kernel, std::int64_t n, DType dtype) {
  Graph g;
  const auto array = [&](const char* name) { return g.input(name, {n}, dtype); };
  const auto scalar = [&] { return g.constant("scalar", {1}, std::vector<float>{stream_scalar}, dtype); };
  double flops = 0.0;
  OpKind kind = OpKind::Add;
  if (kernel == "copy") {  // y = relu(x): one read, one write, no arithmetic worth counting
    g.output("y", g.relu(array("x")));
    kind = OpKind::Relu;
  } else if (kernel == "mul") {
    g.output("b", g.mul(array("c"), scalar()));
    flops = static_cast<double>(n);
    kind = OpKind::Mul;
  } else if (kernel == "add") {
    g.output("c", g.add(array("a"), array("b")));
    flops = static_cast<double>(n);
  } else {
    g.output("a", g.add(array("b"), g.mul(array("c"), scalar())));
    flops = 2.0 * static_cast<double>(n);
  }
  Problem p{.op = stream_op, .kind = kind, .workload = kernel,
            .params = Json{{"n", n}, {"kernel", kernel}}, .dtype = dtype, .graph = std::move(g)};
  p.flops = flops;
  p.bytes = minimum_bytes(p.graph);
  return p;
}

Problem launch_problem() {
  Graph g;
  g.output("z", g.add(g.input("x", {1}), g.input("y", {1})));
  Problem p{.op = launch_op, .kind = OpKind::Add, .workload = "one-element add",
            .params = Json{{"n", 1}}, .dtype = DType::f32, .graph = std::move(g)};
  p.bytes = minimum_bytes(p.graph);
  return p;
}

std::optional<double> best(const std::map<std::string, double>& m, std::initializer_list<const char*> keys) {
  std::optional<double> b;
  for (const char* k : keys)
    if (const auto it = m.find(k); it != m.end()) b = std::max(b.value_or(0.0), it->second);
  return b;
}

}  // namespace

std::optional<double> Ceilings::bandwidth_gbs() const {
  const std::optional<double> kernels = best(stream_gbs, {"copy", "mul", "add"});
  if (!kernels || !device_copy_gbs) return kernels ? kernels : device_copy_gbs;
  return std::max(*kernels, *device_copy_gbs);
}

std::optional<double> Ceilings::gemm_gflops(const std::string& dtype) const {
  const auto it = gflops.find(dtype);
  return it == gflops.end() ? std::nullopt : std::optional(it->second);
}

std::optional<double> Ceilings::compute_gflops(const std::string& dtype) const {
  const std::optional<double> gemm = gemm_gflops(dtype);
  if (!gemm || !fma_gflops) return gemm ? gemm : fma_gflops;
  return std::max(*gemm, *fma_gflops);
}

std::map<std::string, double> Ceilings::compute_ceilings() const {
  std::map<std::string, double> all;
  for (const auto& [dtype, rate] : gflops) all[dtype] = *compute_gflops(dtype);
  if (fma_gflops) all["f32"] = *compute_gflops("f32");
  return all;
}

std::vector<Problem> peak_problems(bool full, const std::vector<DType>& dtypes) {
  std::vector<Problem> problems;
  const std::int64_t n = full ? std::int64_t{1} << 25 : std::int64_t{1} << 24;
  for (const char* kernel : {"copy", "mul", "add", "triad"})
    if (full || std::string(kernel) != "triad") problems.push_back(stream_problem(kernel, n, DType::f32));
  // The GEMM probes: the compute ceiling where the FMA probe is missing or slower (matrix units).
  // Larger sizes are skipped where the time estimate says so.
  for (const DType dtype : dtypes)
    for (const std::int64_t size : {512, 1024, 2048, 4096})
      problems.push_back(gemm_problem({.m = size, .n = size, .k = size, .dtype = dtype},
                                      fmt::format("{}{}x{}x{}", gemm_probe_prefix, size, size, size)));
  problems.push_back(launch_problem());
  return problems;
}

namespace {

// `measure` sets the row's rate from the device.
template <class Measure>
Row device_probe_row(const Target& target, const char* op, const char* workload, Measure measure) {
  Row row{.op = op, .workload = workload, .params = Json::object(), .device = target.spec, .backend = target.backend,
          .dtype = "f32"};
  if (!target.device) {
    row.status = "failed";
    row.reason = target.error;
    return row;
  }
  try {
    measure(*target.device, row);
  } catch (...) {
    record_exception(row, std::current_exception());
  }
  return row;
}

}  // namespace

Row fma_probe_row(const Target& target) {
  return device_probe_row(target, fma_op, "f32 multiply-add chains",
                          [](const Device& d, Row& row) { row.gflops = d.measure_fma_gflops(); });
}

Row copy_probe_row(const Target& target) {
  return device_probe_row(target, copy_op, "device-to-device copy",
                          [](const Device& d, Row& row) { row.gbs = d.measure_copy_gbs(); });
}

bool is_probe(const Row& row) {
  return row.op == stream_op || row.op == launch_op || row.op == fma_op || row.op == copy_op ||
         (row.op == "gemm" && row.workload.rfind(gemm_probe_prefix, 0) == 0);
}

// A ceiling is what the device can reach, so it comes from each probe's fastest run (as
// BabelStream's bandwidth does), not from its median.
Ceilings ceilings_from_rows(const std::vector<Row>& rows, const std::string& device, std::string source) {
  Ceilings c{.source = std::move(source)};
  for (const Row& row : rows) {
    if (row.device != device || row.impl != "native" || row.status != "ok" || !is_probe(row)) continue;
    // Launch latency is what the host waits for a one-element run: its wall time, not the kernel's.
    if (row.op == launch_op && row.host_median_s) c.launch_s = *row.host_median_s;
    if (row.op == fma_op && row.gflops) c.fma_gflops = std::max(c.fma_gflops.value_or(0.0), *row.gflops);
    if (row.op == copy_op && row.gbs) c.device_copy_gbs = std::max(c.device_copy_gbs.value_or(0.0), *row.gbs);
    if (!row.min_s || *row.min_s <= 0.0) continue;
    if (row.op == stream_op) c.stream_gbs[row.workload] = std::max(c.stream_gbs[row.workload], row.bytes / *row.min_s * 1e-9);
    if (row.op == "gemm") c.gflops[row.dtype] = std::max(c.gflops[row.dtype], row.flops / *row.min_s * 1e-9);
  }
  return c;
}

Json to_json(const Ceilings& c) {
  Json j;
  j["stream_gbs"] = c.stream_gbs;
  j["bandwidth_gbs"] = c.bandwidth_gbs() ? Json(*c.bandwidth_gbs()) : Json(nullptr);
  j["gflops"] = c.gflops;
  j["fma_gflops"] = c.fma_gflops ? Json(*c.fma_gflops) : Json(nullptr);
  j["device_copy_gbs"] = c.device_copy_gbs ? Json(*c.device_copy_gbs) : Json(nullptr);
  j["launch_s"] = c.launch_s ? Json(*c.launch_s) : Json(nullptr);
  j["source"] = c.source;
  return j;
}

Ceilings ceilings_from_json(const Json& j) {
  Ceilings c;
  if (!j.is_object()) return c;
  for (const char* key : {"stream_gbs", "gflops"}) {
    auto& target = std::string(key) == "gflops" ? c.gflops : c.stream_gbs;
    if (j.contains(key) && j[key].is_object())
      for (const auto& [k, v] : j[key].items())
        if (v.is_number()) target[k] = v.get<double>();
  }
  const auto number = [&](const char* key, std::optional<double>& to) {
    if (j.contains(key) && j[key].is_number()) to = j[key].get<double>();
  };
  number("launch_s", c.launch_s);
  number("fma_gflops", c.fma_gflops);
  number("device_copy_gbs", c.device_copy_gbs);
  if (j.contains("source") && j["source"].is_string()) c.source = j["source"].get<std::string>();
  return c;
}

void place_on_roofline(Row& row, const Ceilings& c) {
  if (row.status != "ok" || row.bytes <= 0.0 || row.flops <= 0.0) return;
  row.ai = row.flops / row.bytes;
  const std::optional<double> compute = c.compute_gflops(row.dtype), bandwidth = c.bandwidth_gbs();
  if (compute && row.gflops) row.pct_peak = 100.0 * *row.gflops / *compute;
  if (!compute || !bandwidth) return;
  const double memory_roof = *row.ai * *bandwidth;
  row.bound = memory_roof < *compute ? "memory" : "compute";
  if (row.gflops) row.pct_roofline = 100.0 * *row.gflops / std::min(memory_roof, *compute);
}

void write_babelstream_csv(const std::filesystem::path& path, const std::vector<Row>& rows,
                           const std::string& device) {
  std::ofstream file(path);
  file << "function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime\n";
  for (const Row& row : rows) {
    if (row.op != stream_op || row.device != device || row.status != "ok" || !row.min_s || *row.min_s <= 0.0) continue;
    std::string function = row.workload;
    function[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(function[0])));
    file << fmt::format("{},{},{},{},{:.3f},{:.8f},{:.8f},{:.8f}\n", function, row.samples,
               row.params.value("n", std::int64_t{0}), size_of(parse_dtype(row.dtype)),
               row.bytes / *row.min_s * 1e-6, *row.min_s, row.max_s.value_or(0.0), row.mean_s.value_or(0.0));
  }
  file.flush();
  if (!file) throw Error(ErrorCode::IoError, fmt::format("writing '{}' failed", path.string()));
}

}  // namespace porta::bench
