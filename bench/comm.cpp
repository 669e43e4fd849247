#include "comm.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cluster.hpp"
#include "env.hpp"
#include "job.hpp"
#include "porta/dtype.hpp"
#include "porta/error.hpp"
#include "report.hpp"
#include "results.hpp"
#include "device_memory.hpp"
#include "timing.hpp"
#include "transport.hpp"

namespace porta::bench {
namespace {

const std::pair<const char*, Collective> collectives[] = {{"allreduce", Collective::AllReduce},
                                                          {"allgather", Collective::AllGather},
                                                          {"reduce-scatter", Collective::ReduceScatter},
                                                          {"broadcast", Collective::Broadcast}};

Collective collective_of(const std::string& name) {
  for (const auto& [n, c] : collectives)
    if (name == n) return c;
  throw Error(ErrorCode::InvalidArgument, fmt::format("unknown collective '{}'", name));
}

// Rank r's element i: a small integer, so that every sum is exact in f32 and in bf16 (up to 256
// ranks) whatever order the library adds in, and a result can be held to exact equality.
float input_value(int rank, std::size_t i) { return static_cast<float>(static_cast<int>((i * 7 + rank * 3) % 3) - 1); }

// A collective's buffers on one rank, in its storage dtype, and what the receive buffer must hold.
struct Buffers {
  DType dtype;
  std::vector<std::byte> send, recv;
  std::vector<float> expected;
  std::size_t count = 0;  // the `count` of Cluster::run

  void fill(std::vector<std::byte>& bytes, std::size_t n, const std::function<float(std::size_t)>& value) {
    bytes.assign(n * size_of(dtype), std::byte{0});
    for (std::size_t i = 0; i < n; ++i) store_from_f32(bytes.data(), i, dtype, value(i));
  }
};

// `piece` elements per rank's part: the serial computation of what each collective leaves on `rank`.
Buffers make_buffers(Collective op, DType dtype, std::size_t piece, int rank, int ranks) {
  Buffers b{.dtype = dtype, .count = piece};
  const auto sum_over_ranks = [&](std::size_t i) {
    float s = 0.0f;
    for (int r = 0; r < ranks; ++r) s += input_value(r, i);
    return s;
  };
  const auto mine = [&](std::size_t i) { return input_value(rank, i); };
  const std::size_t whole = piece * static_cast<std::size_t>(ranks);
  switch (op) {
    case Collective::AllReduce:
      b.fill(b.send, piece, mine);
      for (std::size_t i = 0; i < piece; ++i) b.expected.push_back(sum_over_ranks(i));
      b.fill(b.recv, piece, [](std::size_t) { return 0.0f; });
      break;
    case Collective::AllGather:
      b.fill(b.send, piece, mine);
      for (std::size_t i = 0; i < whole; ++i) b.expected.push_back(input_value(static_cast<int>(i / piece), i % piece));
      b.fill(b.recv, whole, [](std::size_t) { return 0.0f; });
      break;
    case Collective::ReduceScatter:
      b.fill(b.send, whole, mine);
      for (std::size_t i = 0; i < piece; ++i) b.expected.push_back(sum_over_ranks(rank * piece + i));
      b.fill(b.recv, piece, [](std::size_t) { return 0.0f; });
      break;
    case Collective::Broadcast:  // in place: rank 0's buffer is sent, the others' overwritten
      b.fill(b.recv, piece, [&](std::size_t i) { return rank == 0 ? input_value(0, i) : 0.0f; });
      for (std::size_t i = 0; i < piece; ++i) b.expected.push_back(input_value(0, i));
      break;
  }
  return b;
}

// The largest difference on any rank between what the collective left and the serial result.
double check(Cluster& job, const Buffers& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < b.expected.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(load_as_f32(b.recv.data(), i, b.dtype)) - b.expected[i]));
  return job.max(worst);
}

// Seconds per call of `iterations` calls, the slowest rank's (a collective ends when its last rank
// does); work a transport only enqueues is waited for inside the time.
double seconds_per_call(Cluster& job, Transport& t, const std::function<void()>& call, int iterations) {
  job.barrier();
  const double start = steady_seconds();
  for (int i = 0; i < iterations; ++i) call();
  t.finish();
  return job.max((steady_seconds() - start) / iterations);
}

// As many calls as fill --min-time (at least --min-iters), from the time of one.
int iterations_for(double once, const CommArgs& a) {
  const double wanted = once > 0.0 ? std::ceil(a.min_time_s / once) : 10000.0;
  return static_cast<int>(std::clamp(wanted, static_cast<double>(a.min_iterations), 10000.0));
}

Row comm_row(const std::string& op, DType dtype, std::uint64_t bytes, std::size_t count, Cluster& job, Transport& t) {
  Row row{.op = op, .workload = size_text(bytes), .device = t.buffers(), .backend = t.name(),
          .dtype = std::string(to_string(dtype))};
  row.params = Json{{"bytes", bytes}, {"count", count}, {"ranks", job.size()}, {"transport", t.library()},
                    {"buffers", t.buffers()}};
  row.bytes = static_cast<double>(bytes);
  row.timer = "host";
  return row;
}

void set_time(Row& row, double seconds, int iterations, int ranks) {
  row.samples = iterations;
  row.mean_s = seconds;
  row.algbw_gbs = row.bytes / seconds * 1e-9;
  row.busbw_gbs = *row.algbw_gbs * bus_factor(row.op, ranks);
}

// One collective at one size: its row (and the plain MPI_Allreduce loop's beside an f32 allreduce),
// or none where the size is too small to give each rank an element.
std::vector<Row> measure_collective(const std::string& name, DType dtype, std::uint64_t bytes, const CommArgs& a,
                                    Cluster& job, Transport& t) {
  const Collective op = collective_of(name);
  const bool split = op == Collective::AllGather || op == Collective::ReduceScatter;
  const std::size_t piece = bytes / size_of(dtype) / (split ? static_cast<std::size_t>(job.size()) : 1);
  if (piece == 0) return {};
  const std::size_t whole = piece * (split ? static_cast<std::size_t>(job.size()) : 1);  // nccl-tests' count
  Buffers b = make_buffers(op, dtype, piece, job.rank(), job.size());
  const std::shared_ptr<void> send = b.send.empty() ? nullptr : t.allocate(b.send.size()),
                              recv = t.allocate(b.recv.size());
  if (send) t.upload(send.get(), b.send.data(), b.send.size());
  t.upload(recv.get(), b.recv.data(), b.recv.size());
  const CommType type = dtype == DType::f32 ? CommType::F32 : CommType::BF16;
  const void* from = op == Collective::Broadcast ? recv.get() : send.get();
  const auto call = [&] { t.run(op, type, from, recv.get(), piece); };
  Row row = comm_row(name, dtype, whole * size_of(dtype), whole, job, t);
  call();
  t.finish();
  t.download(b.recv.data(), recv.get(), b.recv.size());
  row.max_abs = check(job, b);
  row.verified = *row.max_abs == 0.0;
  row.oracle = "serial";
  if (!*row.verified)
    row.status = "failed", row.reason = fmt::format("differs from the serial result by {}", *row.max_abs);
  for (int i = 0; i < a.warmup; ++i) call();
  const int iterations = iterations_for(seconds_per_call(job, t, call, 1), a);  // the slowest rank's: one count
  if (!(a.reference && t.name() == "mpi" && op == Collective::AllReduce && dtype == DType::f32)) {
    set_time(row, seconds_per_call(job, t, call, iterations), iterations, job.size());
    return {row};
  }
  // Against the plain loop, the faster of three turns each, taken in alternation, so that the noise
  // of a shared machine falls on both alike.
  double mine = INFINITY, plain = INFINITY;
  for (int turn = 0; turn < 3; ++turn) {
    mine = std::min(mine, seconds_per_call(job, t, call, iterations));
    plain = std::min(plain, job.reference_allreduce_s(piece, iterations));
  }
  set_time(row, mine, iterations, job.size());
  Row reference = comm_row(name, dtype, row.bytes, whole, job, t);
  reference.impl = "plain-mpi";
  reference.reason = "a plain MPI_Allreduce loop (bench/mpi/mpi_cluster.cpp), the reference for porta's: not verified";
  set_time(reference, plain, iterations, job.size());
  return {row, reference};
}

// The runtime's own blocking copy of `bytes` between host memory (pinned or pageable) and a buffer of
// this rank's device, each way: the rate and a check that the bytes arrived. A rank's own device, so
// no collective: ranks of one node that share a link share its bandwidth, as they would in use.
std::vector<Row> measure_copies(DeviceMemory& memory, const std::string& backend, std::uint64_t bytes,
                                const CommArgs& a) {
  std::vector<std::byte> pattern(bytes), back(bytes);
  for (std::size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<std::byte>(i * 131 + 7);
  DeviceAllocation device(memory, bytes);
  std::vector<Row> rows;
  for (const bool pinned : {true, false}) {
    std::vector<std::byte> pageable(pinned ? 0 : bytes);
    const std::unique_ptr<void, std::function<void(void*)>> pinned_host(
        pinned ? memory.allocate_pinned(bytes) : nullptr, [&](void* p) { if (p) memory.release_pinned(p); });
    auto* host = static_cast<std::byte*>(pinned ? pinned_host.get() : pageable.data());
    for (const bool to_device : {true, false}) {
      Row row{.op = to_device ? "host-to-device" : "device-to-host", .workload = size_text(bytes),
              .device = memory.spec(), .backend = backend, .impl = pinned ? "pinned" : "pageable", .dtype = "u8"};
      row.params = Json{{"bytes", bytes}, {"host", row.impl}};
      row.bytes = static_cast<double>(bytes), row.timer = "host";
      std::copy(pattern.begin(), pattern.end(), host);
      const auto copy = [&] {
        to_device ? memory.upload(device.get(), host, bytes) : memory.download(host, device.get(), bytes);
      };
      if (!to_device) memory.upload(device.get(), pattern.data(), bytes);
      copy();
      if (to_device) memory.download(back.data(), device.get(), bytes);
      row.verified = std::equal(pattern.begin(), pattern.end(), to_device ? back.data() : host);
      row.oracle = "the bytes copied";
      if (!*row.verified) row.status = "failed", row.reason = "the bytes that arrived differ from those sent";
      for (int i = 0; i < a.warmup; ++i) copy();
      double start = steady_seconds();
      copy();
      const int iterations = iterations_for(steady_seconds() - start, a);
      start = steady_seconds();
      for (int i = 0; i < iterations; ++i) copy();
      row.samples = iterations, row.mean_s = (steady_seconds() - start) / iterations;
      row.gbs = row.bytes / *row.mean_s * 1e-9;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// A row per direction and host memory saying why `spec` has no copies to measure.
std::vector<Row> copies_unsupported(const std::string& spec, const std::string& why) {
  std::vector<Row> rows;
  for (const char* op : {"host-to-device", "device-to-host"})
    rows.push_back(Row{.op = op, .workload = "-", .device = spec, .backend = spec.substr(0, spec.find(':')),
                       .impl = "pinned, pageable", .status = "unsupported", .reason = why});
  return rows;
}

std::string fixed(const std::optional<double>& v, double scale, int digits) {
  return v ? fmt::format("{:.{}f}", *v * scale, digits) : "-";
}

void print_comm_table(const std::vector<Row>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const Row& row : rows)
    cells.push_back({row.op, row.dtype, row.device, row.impl, std::to_string(static_cast<std::uint64_t>(row.bytes)),
                     fixed(row.mean_s, 1e6, 2), std::to_string(row.samples),
                     fixed(row.algbw_gbs ? row.algbw_gbs : row.gbs, 1.0, 3), fixed(row.busbw_gbs, 1.0, 3),
                     row.verified ? (*row.verified ? "yes" : "NO") : "-",
                     row.status == "ok" ? "ok" : row.status + ": " + single_line(row.reason)});
  print_text_table(stdout, {"op", "dtype", "buffers", "impl", "bytes", "time us", "iters", "algbw GB/s", "busbw GB/s",
                            "verified", "status"},
                   cells, {false, false, false, false, true, true, true, true, true, true, false});
}

// porta's allreduce over the plain loop's, per size: the time ratio (above 1: porta slower), its median
// and geometric mean, and at how many sizes it is within 10 %.
void print_against_reference(const std::vector<Row>& rows) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i + 1 < rows.size(); ++i)
    if (rows[i + 1].impl == "plain-mpi" && rows[i].mean_s && rows[i + 1].mean_s)
      ratios.push_back(*rows[i].mean_s / *rows[i + 1].mean_s);
  if (ratios.empty()) return;
  double log_sum = 0.0;
  for (const double r : ratios) log_sum += std::log(r);
  const auto within = std::count_if(ratios.begin(), ratios.end(), [](double r) { return r <= 1.1; });
  std::sort(ratios.begin(), ratios.end());
  fmt::print("\nallreduce f32, porta's time over a plain MPI_Allreduce loop's: median {:.3f}, geometric mean {:.3f}; "
             "within 10 % (or faster) at {} of {} sizes\n",
             ratios[ratios.size() / 2], std::exp(log_sum / static_cast<double>(ratios.size())), within, ratios.size());
}

}  // namespace

std::string size_text(std::uint64_t bytes) {
  for (const auto& [unit, scale] : {std::pair{"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}})
    if (bytes >= scale && bytes % scale == 0) return fmt::format("{} {}", bytes / scale, unit);
  return fmt::format("{} B", bytes);
}

bool is_comm_op(const std::string& op) {
  return op == "host-to-device" || op == "device-to-host" ||
         std::any_of(std::begin(collectives), std::end(collectives), [&](const auto& c) { return op == c.first; });
}

double bus_factor(const std::string& op, int ranks) {
  const double n = ranks;
  if (op == "allreduce") return 2.0 * (n - 1.0) / n;
  if (op == "allgather" || op == "reduce-scatter") return (n - 1.0) / n;
  return 1.0;
}

CLI::App* add_comm_command(CLI::App& app, CommArgs& a) {
  auto* cmd = app.add_subcommand("comm", "Time collectives (allreduce, allgather, reduce-scatter, broadcast), "
                                         "verified, and host-device copies; run it under mpirun or srun");
  std::vector<std::string> ops;
  for (const auto& [name, op] : collectives) ops.push_back(name);
  cmd->add_option("--op", a.ops, "Collectives, comma-separated")->delimiter(',')->check(CLI::IsMember(ops))
      ->capture_default_str();
  cmd->add_option("--dtype", a.dtypes, "Dtypes, comma-separated: f32, bf16")->delimiter(',')
      ->check(CLI::IsMember({"f32", "bf16"}))->capture_default_str();
  cmd->add_option("--min-bytes", a.min_bytes, "Smallest buffer")->check(CLI::Range(1ull, 1ull << 30))
      ->capture_default_str();
  cmd->add_option("--max-bytes", a.max_bytes, "Largest buffer (at most 1 GiB; each rank holds about three)")
      ->check(CLI::Range(1ull, 1ull << 30))->capture_default_str();
  cmd->add_option("--factor", a.factor, "Each size this many times the last")->check(CLI::Range(2, 1024))
      ->capture_default_str();
  cmd->add_option("--warmup-iters", a.warmup, "Untimed calls before each size")->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--min-iters", a.min_iterations, "Least number of timed calls per size")->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--min-time", a.min_time_s, "Least seconds of timed calls per size")->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  cmd->add_flag("!--no-reference", a.reference, "Skip the plain MPI_Allreduce loop timed beside each f32 allreduce");
  cmd->add_option("--transport", a.transports, "Over what: mpi (host buffers), nccl (each rank's cuda:local buffers)")
      ->delimiter(',')->check(CLI::IsMember({"mpi", "nccl"}))->capture_default_str();
  cmd->add_option("--device", a.devices,
                  "Also time host-device copies, pinned and pageable, on these devices (cuda:N, opencl:N, X:local)")
      ->delimiter(',');
  cmd->add_option("--out", a.out, "Results folder (default: ./porta-results/<UTC timestamp>)");
  cmd->add_option("--rank-timeout", a.rank_timeout_s, "Seconds a rank waits for the others before it ends the job")
      ->check(CLI::PositiveNumber)->capture_default_str();
  return cmd;
}

namespace {

std::vector<std::uint64_t> sizes(const CommArgs& a) {
  std::vector<std::uint64_t> list;
  for (std::uint64_t bytes = a.min_bytes; bytes <= a.max_bytes; bytes *= static_cast<std::uint64_t>(a.factor))
    list.push_back(bytes);
  return list;
}

// Every collective at every size over each transport. The numbers are the job's (the slowest rank's
// time, every rank's check), so only rank 0 keeps the rows.
std::vector<Row> collective_rows(const CommArgs& a, Cluster& job) {
  std::vector<Row> rows;
  for (const std::string& name : a.transports) {
    const std::unique_ptr<Transport> t = name == "nccl" ? nccl_transport(job) : mpi_transport(job);
    for (const std::string& op : a.ops)
      for (const std::string& dtype : a.dtypes)
        for (const std::uint64_t bytes : sizes(a))
          for (Row& row : measure_collective(op, parse_dtype(dtype), bytes, a, job, *t)) rows.push_back(std::move(row));
  }
  return job.rank() == 0 ? rows : std::vector<Row>{};
}

// Each rank's own device's copies, its rows marked with its rank when gathered.
std::vector<Row> copy_rows(const CommArgs& a, const Cluster& job) {
  std::vector<Row> rows;
  for (const std::string& given : a.devices) {
    const std::string spec = local_device_spec(given, job.local_rank());
    try {
      const std::unique_ptr<DeviceMemory> memory = open_device_memory(spec);
      const std::string backend = spec.substr(0, spec.find(':'));
      for (const std::uint64_t bytes : sizes(a))
        for (Row& row : measure_copies(*memory, backend, bytes, a)) rows.push_back(std::move(row));
    } catch (const Error& e) {
      for (Row& row : copies_unsupported(spec, e.what())) rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace

int run_comm(const CommArgs& a, Cluster& job, const std::filesystem::path& dir, const std::string& command_line) {
  job.set_timeout(a.rank_timeout_s);
  std::vector<Row> rows = collective_rows(a, job);
  for (Row& row : copy_rows(a, job)) rows.push_back(std::move(row));
  const bool failed = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.status == "failed"; });
  Json env = environment({}, command_line);
  env["suite"] = "comm";
  const std::optional<Json> doc = gather_document(job, env, rows);
  if (!doc) return failed ? 1 : 0;
  fmt::print("{} ranks over {}\n\n", job.size(), job.transport());
  print_comm_table(rows);
  print_against_reference(rows);
  const std::filesystem::path json = dir / "results.json", csv = dir / "results.csv", html = dir / "report.html";
  write_json(json, *doc);
  write_csv(csv, (*doc)["results"]);
  write_report({{"results.json", *doc}}, html);
  fmt::print("\nResults: {}\n         {}\nReport:  {}\n", json.string(), csv.string(), html.string());
  return failed ? 1 : 0;
}

}  // namespace porta::bench
