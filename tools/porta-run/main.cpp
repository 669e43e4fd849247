// porta-run: load an ONNX model, compile it for a device, run it and time it, as trtexec does.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "backward.hpp"
#include "npy.hpp"
#include "ort.hpp"
#include "porta/onnx.hpp"
#include "porta/porta.hpp"

namespace {

using namespace porta;
using Clock = std::chrono::steady_clock;

// A mistake in the command line: one line on stderr and exit code 2.
struct ArgumentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::string model;
  std::string device = "cpu";
  std::string impl = "native";
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::vector<std::string> shapes;  // NAME=DIMS
  std::uint64_t seed = 42;
  std::int64_t batch = 1;
  int iterations = 10;
  std::string output_dir;
  std::string compare;  // "ort": ONNX Runtime on the same file and inputs
  bool profile = false;
  bool backward = false;
  std::vector<std::string> output_grads;  // NAME=FILE.npy: seeds of --backward
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* option) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw ArgumentError(fmt::format("{} '{}' must be NAME=VALUE", option, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Shape parse_dims(const std::string& text) {  // "1x3x224x224" or "1,3,224,224"
  Shape shape;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto end = text.find_first_of("x,", pos);
    const std::string part = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    std::size_t used = 0;
    long long d = 0;
    try {
      d = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || d < 1)
      throw ArgumentError(fmt::format("shape '{}' must be positive dims like 1x3x224x224", text));
    shape.push_back(d);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return shape;
}

// Output names may hold '/' or ':'; file names keep letters, digits, '-', '_' and '.'.
std::string file_name(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

void write_outputs(const Args& args, const Graph& graph, const Executable& exe) {
  if (!args.output_dir.empty()) std::filesystem::create_directories(args.output_dir);
  for (const auto& [name, t] : graph.outputs()) {
    const TensorDesc& desc = exe.output_desc(name);
    std::string where;
    if (!args.output_dir.empty()) {
      const auto path = std::filesystem::path(args.output_dir) / (file_name(name) + ".npy");
      npy::write(path, npy::storable(desc.dtype, desc.shape, exe.output_bytes(name)));
      where = " -> " + path.string();
    }
    fmt::print("output {} {} {}{}\n", name, to_string(desc.shape), to_string(desc.dtype), where);
  }
}

// Sets each output's seed from its --output-grad file, or to ones.
void set_seeds(Executable& exe, const std::vector<std::string>& outputs, const std::map<std::string, std::string>& files) {
  for (const auto& [name, file] : files)
    if (std::find(outputs.begin(), outputs.end(), name) == outputs.end())
      throw ArgumentError(fmt::format("--output-grad '{}': the model has no such output", name));
  for (const std::string& name : outputs) {
    const std::string seed = cli::seed_name(name);
    const TensorDesc& desc = exe.input_desc(seed);
    std::vector<float> values(static_cast<std::size_t>(desc.numel()), 1.0f);
    if (const auto it = files.find(name); it != files.end()) {
      const npy::Array a = npy::read(it->second);
      if (a.shape != desc.shape)
        throw Error(ErrorCode::ShapeMismatch, fmt::format("--output-grad {}: shape {} does not match output '{}' {}",
                                                          it->second, to_string(a.shape), name, to_string(desc.shape)));
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = load_as_f32(a.data.data(), i, a.dtype);
    }
    exe.set_input(seed, values);
  }
}

// CLI11's own range checks print the whole double range; this says in a few words what is wrong.
CLI::Validator at_least(long long bound) {
  return CLI::Validator(
      [bound](std::string& text) -> std::string {
        std::size_t used = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size()) return fmt::format("'{}' is not a whole number", text);
        return value < bound ? fmt::format("{} must be >= {}", text, bound) : std::string();
      },
      fmt::format("INT>={}", bound));
}

// Sets every input from its file or seeded random values; returns the values set, as float32.
std::vector<ort::Input> set_inputs(Executable& exe, const Graph& graph, const Args& args,
                                   const std::map<std::string, std::string>& files) {
  std::vector<ort::Input> set;
  std::mt19937_64 rng(args.seed);
  for (const Tensor t : graph.inputs()) {
    const std::string& name = graph.info(t).name;
    if (name.starts_with(cli::seed_prefix)) continue;  // set by set_seeds
    const TensorDesc& desc = graph.desc(t);
    std::vector<float> values(static_cast<std::size_t>(desc.numel()));
    if (const auto it = files.find(name); it != files.end()) {
      const npy::Array a = npy::read(it->second);
      if (a.shape != desc.shape)
        throw Error(ErrorCode::ShapeMismatch, fmt::format("{}: shape {} does not match input '{}' {}{}", it->second,
                                                          to_string(a.shape), name, to_string(desc.shape),
                                                          a.shape.size() == desc.shape.size() && !a.shape.empty()
                                                              ? " (--batch or --shape change the model's input shape)"
                                                              : ""));
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = load_as_f32(a.data.data(), i, a.dtype);
      if (a.dtype == desc.dtype)
        exe.set_input_bytes(name, a.data);
      else
        exe.set_input(name, values);
      fmt::print("input  {} {} {} from {}\n", name, to_string(desc.shape), to_string(desc.dtype), it->second);
    } else {
      // Integer inputs (token ids, indices) take small non-negative values, valid for any index range >= 8.
      const bool whole = !is_float(desc.dtype);
      std::uniform_real_distribution<float> dist(whole ? 0.0f : -1.0f, whole ? 8.0f : 1.0f);
      for (float& v : values) v = whole ? std::floor(dist(rng)) : dist(rng);
      exe.set_input(name, values);
      fmt::print("input  {} {} {} random (seed {})\n", name, to_string(desc.shape), to_string(desc.dtype), args.seed);
    }
    set.push_back({name, desc.shape, std::move(values), desc.dtype});
  }
  return set;
}

// The same model in ONNX Runtime on the same inputs: its latency beside porta's and how far each
// output is from porta's (relative L2 error and largest difference).
void compare_with_ort(const Args& args, const Graph& graph, const Executable& exe,
                      const std::vector<ort::Input>& inputs, double porta_median_ms) {
  ort::Options options;
  options.threads = exe.device().backend == "cpu" ? exe.device().threads : Device::open("cpu").info().threads;
  options.profile_runs = args.profile ? 6 : 0;
  const ort::Result r = ort::run(args.model, inputs, options);
  if (!r.error.empty()) throw Error(ErrorCode::Unsupported, "--compare ort: " + r.error);
  fmt::print("onnxruntime ({}): median {:.3f} ms, min {:.3f} ms over {} runs; ORT time / porta time {:.3f}\n",
             r.version, r.median_s * 1e3, r.min_s * 1e3, r.samples, r.median_s * 1e3 / porta_median_ms);
  for (const ort::Output& o : r.outputs) {
    const std::vector<float> mine = exe.output(o.name);
    if (mine.size() != o.values.size())
      throw Error(ErrorCode::ShapeMismatch, fmt::format("--compare ort: output '{}' is {} in ORT, {} in porta", o.name,
                                                        to_string(o.shape), to_string(exe.output_desc(o.name).shape)));
    double error = 0.0, energy = 0.0, largest = 0.0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const double d = static_cast<double>(mine[i]) - o.values[i];
      const double want = o.values[i];
      error += d * d, energy += want * want, largest = std::max(largest, std::abs(d));
    }
    fmt::print("output {} against ORT: relative L2 error {:.3g}, largest difference {:.3g}\n", o.name,
               std::sqrt(error / std::max(energy, 1e-300)), largest);
  }
  if (args.profile) {
    fmt::print("\nBy node, the last run, and what each ran:\n");
    ort::print_nodes(stdout, exe);
    fmt::print("\nBy kind of node: porta, the last run; ORT, the mean of 5 profiled runs\n");
    ort::print_by_kind(stdout, graph, {{"porta", ort::node_times(exe)}, {"ORT", r.profile}});
  }
}

int run(const Args& args) {
  onnx::LoadOptions options;
  options.batch = args.batch;
  for (const auto& text : args.shapes) {
    auto [name, dims] = split_assignment(text, "--shape");
    options.input_shapes[name] = parse_dims(dims);
  }
  std::map<std::string, std::string> files;
  for (const auto& text : args.inputs) {
    auto [name, file] = split_assignment(text, "--input");
    if (!files.emplace(name, file).second) throw ArgumentError(fmt::format("--input gives '{}' twice", name));
  }

  std::map<std::string, std::string> seed_files;
  for (const auto& text : args.output_grads) {
    auto [name, file] = split_assignment(text, "--output-grad");
    if (!seed_files.emplace(name, file).second) throw ArgumentError(fmt::format("--output-grad gives '{}' twice", name));
  }
  if (!seed_files.empty() && !args.backward) throw ArgumentError("--output-grad needs --backward");

  auto start = Clock::now();
  Graph graph = onnx::load(args.model, options);
  const cli::Backward backward = args.backward ? cli::append_backward(graph) : cli::Backward{};
  for (const cli::Skipped& t : backward.skipped)
    fmt::print("backward: no gradient for {} '{}' ({}: only float tensors have gradients)\n",
               t.output ? "output" : "input or initializer", t.name, to_string(t.dtype));
  const double load_ms = ms_since(start);
  for (const auto& [name, file] : files) {
    const auto inputs = graph.inputs();
    if (std::none_of(inputs.begin(), inputs.end(), [&](Tensor t) { return graph.info(t).name == name; })) {
      std::string known;
      for (Tensor t : inputs) known += (known.empty() ? "" : ", ") + graph.info(t).name;
      throw ArgumentError(fmt::format("--input '{}': the model has no such input (its inputs: {})", name, known));
    }
  }

  const Device device = Device::open(args.device);
  CompileOptions compile_options;
  compile_options.profile = args.profile;
  if (args.impl == "vendor") compile_options.impl = Impl::Vendor;
  start = Clock::now();
  Executable exe = device.compile(graph, compile_options);
  const double compile_ms = ms_since(start);
  const std::vector<ort::Input> inputs = set_inputs(exe, graph, args, files);
  set_seeds(exe, backward.seeded, seed_files);

  start = Clock::now();
  exe.run();
  const double first_ms = ms_since(start);
  std::vector<double> times;
  for (int i = 0; i < args.iterations; ++i) {
    start = Clock::now();
    exe.run();
    times.push_back(ms_since(start));
  }
  std::sort(times.begin(), times.end());

  fmt::print("model  {} ({} nodes) on {} [{}]\n", args.model, graph.nodes().size(), exe.device().spec, args.impl);
  fmt::print("load {:.1f} ms, compile {:.1f} ms, first run {:.3f} ms, planned peak {:.1f} MiB\n", load_ms, compile_ms,
             first_ms, static_cast<double>(exe.planned_peak_bytes()) / (1 << 20));
  if (!times.empty())
    fmt::print("latency over {} runs: median {:.3f} ms, min {:.3f} ms\n", times.size(), times[times.size() / 2],
               times.front());
  write_outputs(args, graph, exe);
  if (args.compare == "ort") {
    compare_with_ort(args, graph, exe, inputs, times.empty() ? first_ms : times[times.size() / 2]);
  } else if (args.profile) {
    fmt::print("\nBy node, the last run, and what each ran:\n");
    ort::print_nodes(stdout, exe);
    fmt::print("\nBy kind of node, the last run:\n");
    ort::print_by_kind(stdout, graph, {{"porta", ort::node_times(exe)}});
  }
  return 0;
}

std::string single_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"porta-run: run an ONNX model on a device and time it"};
  app.add_option("model", args.model, "The .onnx file")->required();
  app.add_option("--device", args.device, "Device spec: cpu, cpu:threads=N, opencl:0, ref, ...")->capture_default_str();
  app.add_option("--impl", args.impl, "Kernel provider")
      ->check(CLI::IsMember({"native", "vendor"}))
      ->capture_default_str();
  app.add_option("--input", args.inputs,
                 "NAME=FILE.npy: an input's values (float32, float16, int64, int32 or bool, C order); "
                 "inputs not given are seeded uniform random in [-1, 1) (integer ones: whole numbers in [0, 8))");
  app.add_option("--shape", args.shapes, "NAME=DIMS, e.g. input=1x3x224x224: an input's shape, replacing the model's");
  app.add_option("--seed", args.seed, "Seed of the random inputs")->capture_default_str();
  app.add_option("--batch", args.batch, "Size of symbolic (dynamic) batch dimensions")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--iterations", args.iterations, "Timed runs after the first")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--output-dir", args.output_dir, "Write each output as NAME.npy here");
  app.add_flag("--backward", args.backward,
               "Also compute the gradient of sum(output * seed), over every float output, with respect to every float "
               "input and initializer, each an output NAME.grad (written as NAME.grad.npy; --output-dir defaults to "
               ".); integer and bool tensors have none and are named as skipped");
  app.add_option("--output-grad", args.output_grads,
                 "NAME=FILE.npy: the seed of output NAME for --backward (its shape; default all ones)");
  app.add_option("--compare", args.compare,
                 "ort: run the model in ONNX Runtime's CPU provider too (same inputs, the cpu device's threads), "
                 "timed beside porta, its outputs checked against porta's")
      ->check(CLI::IsMember({"ort"}));
  app.add_flag("--profile", args.profile,
               "Print each node's time and plan, then the time by kind of node (and ORT's, with --compare ort)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    fmt::print(stderr, "porta-run: error: {} (see --help)\n", single_line(e.what()));
    return 2;
  }
  // One clear line and a non-zero exit for anything that goes wrong; never a crash.
  if (args.backward && args.output_dir.empty()) args.output_dir = ".";
  try {
    return run(args);
  } catch (const ArgumentError& e) {
    fmt::print(stderr, "porta-run: error: {}\n", single_line(e.what()));
    return 2;
  } catch (const Error& e) {  // the code lets scripts tell a refusal (Unsupported) from a fault
    fmt::print(stderr, "porta-run: error ({}): {}\n", to_string(e.code()), single_line(e.what()));
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "porta-run: error: {}\n", single_line(e.what()));
    return 1;
  }
}
