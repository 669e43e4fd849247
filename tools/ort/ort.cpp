#include "ort.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "core/runtime/embedded_source.hpp"
#include "porta/error.hpp"

namespace porta::detail {
std::span<const EmbeddedSource> ort_scripts();  // ort_reference.js, see CMakeLists.txt
}

namespace porta::ort {
namespace {

using Json = nlohmann::json;

// A folder of its own for one run's script, inputs, outputs and profile, removed when done.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "porta-ort-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw Error(ErrorCode::IoError, "cannot create a folder like " + pattern);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

std::string quoted(const std::string& text) {  // one shell word
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string dims(const Shape& shape) {
  std::string out;
  for (const auto d : shape) {
    if (!out.empty()) out += 'x';
    out += std::to_string(d);
  }
  return out;
}

void write_file(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out.flush()) throw Error(ErrorCode::IoError, "cannot write " + path.string());
}

std::vector<float> read_floats(const std::filesystem::path& path, std::size_t count) {
  std::vector<float> values(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (!in) throw Error(ErrorCode::IoError, "ONNX Runtime's output " + path.string() + " is short");
  return values;
}

std::string node() {
  const char* chosen = std::getenv("PORTA_NODE");
  return chosen && *chosen ? chosen : "node";
}

// ONNX Runtime's name for a tensor type of the inputs it is fed.
std::string type_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::i64: return "int64";
    case DType::i32: return "int32";
    case DType::boolean: return "bool";
    case DType::f16: case DType::bf16: break;
  }
  throw Error(ErrorCode::Unsupported, "ONNX Runtime is fed float32, int64, int32 or bool inputs here, not " +
                                          std::string(to_string(dtype)));
}

std::string command_for(const std::filesystem::path& model, const std::vector<Input>& inputs, const Options& o,
                        const TempDir& dir) {
  std::string command = fmt::format(
      "{} {} --model {} --ort {} --dir {} --threads {} --warmup {} --min-samples {} --min-time {} --max-time {} "
      "--profile {}",
      quoted(node()), quoted((dir.path / "ort_reference.js").string()), quoted(std::filesystem::absolute(model).string()),
      quoted(install_dir().string()), quoted(dir.path.string()), o.threads, o.warmup_s, o.min_samples, o.min_time_s,
      o.max_time_s, o.profile_runs);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = fmt::format("in{}.bin", i);
    write_file(dir.path / file, inputs[i].values.data(), inputs[i].values.size() * sizeof(float));
    const std::string input =
        fmt::format("{}={}:{}:{}", inputs[i].name, file, dims(inputs[i].shape), type_name(inputs[i].dtype));
    command += " --input " + quoted(input);
  }
  return command + " 2>&1";
}

void read_result(const Json& j, const TempDir& dir, Result& r) {
  r.version = j.at("version").get<std::string>();
  r.samples = j.at("samples").get<int>();
  r.median_s = j.at("median_s").get<double>();
  r.min_s = j.at("min_s").get<double>();
  r.p90_s = j.at("p90_s").get<double>();
  r.first_run_s = j.at("first_run_s").get<double>();
  for (const Json& o : j.at("outputs")) {
    Output out;
    out.name = o.at("name").get<std::string>();
    out.shape = o.at("dims").get<Shape>();
    if (o.at("type") != "float32") {
      r.error = fmt::format("ONNX Runtime's output '{}' is {}, not float32", out.name, o.at("type").dump());
      return;
    }
    std::size_t count = 1;
    for (const auto d : out.shape) count *= static_cast<std::size_t>(d);
    out.values = read_floats(dir.path / o.at("file").get<std::string>(), count);
    r.outputs.push_back(std::move(out));
  }
  if (j.contains("profile"))
    for (const Json& n : j.at("profile"))
      r.profile.push_back({n.at("name").get<std::string>(), n.at("op").get<std::string>(), n.at("seconds").get<double>()});
}

}  // namespace

std::filesystem::path install_dir() {
  if (const char* chosen = std::getenv("PORTA_ORT"); chosen && *chosen) return chosen;
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/root") / ".cache/porta/onnxruntime-node";
}

std::string capture_output(const std::string& command) {
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw Error(ErrorCode::IoError, "cannot run: " + command);
  std::string out;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe.get())) out.append(buffer, n);
  return out;
}

Result run(const std::filesystem::path& model, const std::vector<Input>& inputs, const Options& options) {
  const TempDir dir;
  const std::string_view script = detail::ort_scripts().front().text;
  write_file(dir.path / "ort_reference.js", script.data(), script.size());
  const std::string out = capture_output(command_for(model, inputs, options, dir));
  const std::size_t brace = out.rfind("\n{");
  const Json j = Json::parse(brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
  Result r;
  if (j.is_discarded() || !j.is_object()) {
    std::string text = out.substr(0, 300);
    for (char& c : text) c = c == '\n' ? ' ' : c;
    r.error = fmt::format("{} could not run ONNX Runtime's script: {}", node(), text);
  } else if (j.contains("error")) {
    r.error = j["error"].get<std::string>();
  } else {
    read_result(j, dir, r);
  }
  return r;
}

}  // namespace porta::ort
