#include "standings.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/core.h>

#include "models.hpp"
#include "results_file.hpp"

namespace porta::bench {
namespace {

constexpr double good_ratio = 0.9;  // the counts: rows where porta reaches this fraction of the peer's rate

enum class Kind { Gemm, Conv, Depthwise, Network, Transformer, Training, DataGradient, FilterGradient };
const char* const kind_names[] = {"GEMM",         "convolution", "depthwise convolution", "networks",
                                  "transformers", "training",    "data gradients",        "weight gradients"};

static_assert(std::size(kind_names) == static_cast<std::size_t>(Kind::FilterGradient) + 1);

// Whole networks (and their training epochs) are timed, not rated.
bool is_network(Kind kind) { return kind == Kind::Network || kind == Kind::Transformer || kind == Kind::Training; }

// The page's sections in order: the cpu backend's by kind, whole networks (convolutional, then
// transformers), then OpenCL and GPU devices with a table per kind.
enum class Area { Gemm, Conv, Depthwise, Backward, Networks, Transformers, Training, OpenCL, Gpu };
const std::pair<const char*, const char*> area_texts[] = {
    {"GEMM", "Matrix multiplication on the cpu backend: porta's kernels beside oneDNN (`--impl vendor`) and "
             "OpenBLAS (`--impl openblas`)."},
    {"Convolution layers", "Dense convolutions on the cpu backend (ResNet-50's layers, and any other a file lists) "
                           "beside oneDNN."},
    {"Depthwise layers", "Depthwise convolutions on the cpu backend (EfficientNet-B0's layers) beside oneDNN."},
    {"Backward layers", "The gradients of conv and linear layers on the cpu backend (ResNet-50's convs, "
                        "EfficientNet-B0's depthwise layers, BERT's and ResNet-50's linear layers; "
                        "`--suite backward`): "
                        "porta's graph from `autodiff::gradients` beside oneDNN's backward primitives. Data gradients "
                        "are dx of a conv and dA of a GEMM, weight gradients dw and dB."},
    {"Whole networks", "`porta-bench model`: latency of a whole network, beside oneDNN, PyTorch eager and ONNX "
                       "Runtime on as many threads."},
    {"Transformers", "`porta-bench model` on BERT and ViT: latency of a whole transformer, beside PyTorch eager "
                     "and ONNX Runtime on as many threads, whose outputs each check porta's."},
    {"Training", "`porta-bench train`: the last epoch of training steps (forward, backward and SGD with momentum) "
                 "on synthetic data, in ms, beside PyTorch eager's on as many threads. PyTorch starts from its own "
                 "weights, so no row checks another; tests/test_training.cpp checks porta's steps against ref."},
    {"OpenCL", "OpenCL devices: porta's kernels beside CLBlast."},
    {"GPU", "CUDA and HIP devices: porta's kernels beside cuBLAS and cuDNN."},
};
static_assert(std::size(area_texts) == static_cast<std::size_t>(Area::Gpu) + 1);

std::optional<Kind> kind_of(const Point& p) {
  if (p.op == "gemm") return Kind::Gemm;
  if (p.op == "model")
    return p.workload.starts_with("bert") || p.workload.starts_with("vit") ? Kind::Transformer : Kind::Network;
  if (p.op == "train") return Kind::Training;
  if (p.op == "conv2d") return number_of(p.params, "groups").value_or(1) > 1 ? Kind::Depthwise : Kind::Conv;
  if (p.op == "conv2d_backward_data" || p.op == "gemm_backward_a") return Kind::DataGradient;
  if (p.op == "conv2d_backward_filter" || p.op == "gemm_backward_b") return Kind::FilterGradient;
  return std::nullopt;
}

std::optional<Area> area_of(const Platform& pf, Kind kind) {
  // Peers, and the oracle: no area of their own.
  if (pf.backend == "pytorch" || pf.backend == "onnxruntime" || pf.backend == "ref") return std::nullopt;
  if (kind == Kind::Network) return Area::Networks;
  if (kind == Kind::Transformer) return Area::Transformers;
  if (kind == Kind::Training) return Area::Training;
  if (pf.backend == "opencl") return Area::OpenCL;
  if (pf.backend == "cuda" || pf.backend == "hip") return Area::Gpu;
  if (pf.backend != "cpu") return std::nullopt;
  if (kind == Kind::DataGradient || kind == Kind::FilterGradient) return Area::Backward;
  return kind == Kind::Gemm ? Area::Gemm : kind == Kind::Conv ? Area::Conv : Area::Depthwise;
}

// Areas with a table per kind of problem, whose headings name it.
bool by_kind(Area area) { return area == Area::Backward || area == Area::OpenCL || area == Area::Gpu; }

// A model row's impl may name its conv layout ("native/nhwc"): the provider, and the layout, which
// becomes part of the row's name.
std::string provider_of(const Point& p) { return p.impl.substr(0, p.impl.find('/')); }
std::string layout_of(const Point& p) {
  const std::size_t slash = p.impl.find('/');
  return slash == std::string::npos ? "" : p.impl.substr(slash + 1);
}

std::string peer_name(const Platform& pf, const Point& p, Kind kind) {
  const std::string provider = provider_of(p);
  if (pf.backend == "pytorch") return "PyTorch";
  if (pf.backend == "onnxruntime") return "ONNX Runtime";
  if (provider == "openblas") return "OpenBLAS";
  if (provider == "vendor" && pf.backend == "cpu") return "oneDNN";
  if (provider == "vendor" && pf.backend == "opencl") return "CLBlast";
  if (provider == "vendor" && pf.backend == "cuda") return kind == Kind::Gemm ? "cuBLAS" : "cuDNN";
  return pf.backend + " " + provider;
}

// What porta is compared with on a platform: its other providers, and on a cpu device the PyTorch
// and ONNX Runtime rows of the same file on as many threads.
bool is_peer_of(const Merged& m, const Point& q, std::size_t platform) {
  const Platform &pf = m.platforms[platform], &qf = m.platforms[q.platform];
  if (q.platform == platform) return provider_of(q) != "native";
  return pf.backend == "cpu" && qf.input == pf.input &&
         ((qf.backend == "pytorch" && qf.spec == torch_device_spec(pf.threads)) ||
          (qf.backend == "onnxruntime" && qf.spec == ort_device_spec(pf.threads)));
}

struct Line {
  const Point* native;
  std::vector<const Point*> peers;  // one per column of the table, null where the peer has no such row
};

// One kind of problem on one platform: porta's rows, each beside its peers' rows.
struct Table {
  Area area;
  Kind kind;
  std::size_t platform;
  std::vector<std::string> peers;  // column names, in the file's order
  std::vector<Line> lines;
};

// The peer's row of the same problem: the same layout, else one without a layout (PyTorch's, ORT's).
const Point* peer_row(const std::vector<std::pair<const Point*, std::string>>& candidates, const std::string& peer,
                      const Point& native) {
  const Point* loose = nullptr;
  for (const auto& [q, name] : candidates) {
    if (name != peer || q->op != native.op || q->workload != native.workload || q->dtype != native.dtype) continue;
    if (layout_of(*q) == layout_of(native)) return q;
    if (layout_of(*q).empty() && !loose) loose = q;
  }
  return loose;
}

// A peer's column where it has a row that is not unsupported (OpenBLAS beside an OpenCL device has none).
void add_peers(const Merged& m, Table& t) {
  std::vector<std::pair<const Point*, std::string>> candidates;
  for (const Point& q : m.points) {
    if (kind_of(q) != t.kind || !is_peer_of(m, q, t.platform)) continue;
    const std::string& name = candidates.emplace_back(&q, peer_name(m.platforms[q.platform], q, t.kind)).second;
    if (q.status != "unsupported" && std::find(t.peers.begin(), t.peers.end(), name) == t.peers.end())
      t.peers.push_back(name);
  }
  for (Line& line : t.lines)
    for (const std::string& peer : t.peers) line.peers.push_back(peer_row(candidates, peer, *line.native));
}

std::string file_name(const ResultsInput& input) { return std::filesystem::path(input.name).filename().string(); }

// Sorted by area, file name, device and kind, so that the order of the arguments does not matter.
std::vector<Table> tables_of(const Merged& m, const std::vector<ResultsInput>& inputs) {
  std::map<std::pair<std::size_t, Kind>, Table> tables;
  for (const Point& p : m.points) {
    const std::optional<Kind> kind = kind_of(p);
    const std::optional<Area> area = kind ? area_of(m.platforms[p.platform], *kind) : std::nullopt;
    if (!area || provider_of(p) != "native") continue;
    Table& t = tables.try_emplace({p.platform, *kind}, Table{.area = *area, .kind = *kind, .platform = p.platform})
                   .first->second;
    t.lines.push_back({&p, {}});
  }
  std::vector<Table> out;
  for (auto& [key, t] : tables) {
    add_peers(m, t);
    out.push_back(std::move(t));
  }
  const auto order = [&](const Table& t) {
    const Platform& pf = m.platforms[t.platform];
    return std::tuple{t.area, file_name(inputs[pf.input]), pf.spec, t.kind};
  };
  std::stable_sort(out.begin(), out.end(), [&](const Table& a, const Table& b) { return order(a) < order(b); });
  return out;
}

// --- numbers ------------------------------------------------------------------------------------

// porta's rate over the peer's: the peer's median time over porta's.
std::optional<double> ratio(const Point* native, const Point* peer) {
  if (!native || !peer || native->status != "ok" || peer->status != "ok" || !native->median_s || !peer->median_s ||
      *native->median_s <= 0.0)
    return std::nullopt;
  return *peer->median_s / *native->median_s;
}

struct Standing {
  std::vector<double> ratios;
  std::size_t without = 0;  // rows with no ratio: one side did not run, or did not run ok

  std::size_t good() const {
    const auto is_good = [](double r) { return r >= good_ratio; };
    return static_cast<std::size_t>(std::count_if(ratios.begin(), ratios.end(), is_good));
  }
  double geomean() const {
    double log_sum = 0.0;
    for (const double r : ratios) log_sum += std::log(r);
    return std::exp(log_sum / static_cast<double>(ratios.size()));
  }
};

Standing standing(const std::vector<const Line*>& lines, std::size_t peer) {
  Standing s;
  for (const Line* line : lines)
    if (const auto r = ratio(line->native, line->peers[peer])) s.ratios.push_back(*r);
    else ++s.without;
  return s;
}

std::string ratio_text(std::optional<double> r) { return r ? fmt::format("{:.2f}", *r) : "-"; }

// --- markdown -----------------------------------------------------------------------------------

// Text for a table cell: a '|' would end it.
std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string code(const std::string& text) {
  return text.find('`') == std::string::npos ? "`" + text + "`" : "`` " + text + " ``";
}

std::string unit(Kind kind) { return is_network(kind) ? "ms" : "GFLOP/s"; }

// PyTorch is the reference itself: porta-bench has nothing to check it against.
bool unverified(const Merged& m, const Point& p) {
  return p.status == "ok" && !p.verified && m.platforms[p.platform].backend != "pytorch";
}

std::string value_text(const Merged& m, const Point* p, Kind kind) {
  if (!p) return "-";
  if (p->status != "ok") return p->status;
  std::string text = is_network(kind) ? (p->median_s ? fmt::format("{:.2f}", *p->median_s * 1e3) : "-")
                                      : (p->gflops ? fmt::format("{:.1f}", *p->gflops) : "-");
  if (!is_network(kind) && !p->effective.empty()) text += " eff";
  if (unverified(m, *p)) text += " unverified";
  return text;
}

std::string line_label(const Point& p) {
  const std::string layout = layout_of(p);
  return cell(layout.empty() ? p.workload : p.workload + " (" + layout + ")");
}

std::string rows_table(const Merged& m, const Table& t, const std::vector<const Line*>& lines, bool with_mean) {
  std::string md = fmt::format("| workload | dtype | porta {} |", unit(t.kind));
  std::string rule = "| --- | --- | ---: |";
  for (const std::string& peer : t.peers) {
    md += fmt::format(" {} {} | porta ÷ {} |", peer, unit(t.kind), peer);
    rule += " ---: | ---: |";
  }
  md += "\n" + rule + "\n";
  for (const Line* line : lines) {
    md += fmt::format("| {} | {} | {} |", line_label(*line->native), line->native->dtype,
                      value_text(m, line->native, t.kind));
    for (std::size_t c = 0; c < t.peers.size(); ++c)
      md += fmt::format(" {} | {} |", value_text(m, line->peers[c], t.kind),
                        ratio_text(ratio(line->native, line->peers[c])));
    md += "\n";
  }
  if (!with_mean || t.peers.empty()) return md;
  md += "| geometric mean | | |";
  for (std::size_t c = 0; c < t.peers.size(); ++c) {
    const Standing s = standing(lines, c);
    md += fmt::format(" | {} |", s.ratios.empty() ? "-" : ratio_text(s.geomean()));
  }
  return md + "\n";
}

std::string family_of(const Point& p) {
  const std::size_t slash = p.workload.find('/');
  return slash == std::string::npos ? p.op : p.workload.substr(0, slash);
}

// Per workload family (the label's first part): each peer's geometric mean, lowest ratio and count.
std::string family_table(const Table& t, const std::vector<const Line*>& all) {
  std::vector<std::pair<std::string, std::vector<const Line*>>> families;
  for (const Line* line : all) {
    const std::string family = family_of(*line->native);
    auto it = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.first == family; });
    if (it == families.end()) it = families.insert(families.end(), {family, {}});
    it->second.push_back(line);
  }
  families.emplace_back("all", all);
  std::string md = "| family | rows |", rule = "| --- | ---: |";
  for (const std::string& peer : t.peers) {
    md += fmt::format(" porta ÷ {} | lowest | >= {:.2f} |", peer, good_ratio);
    rule += " ---: | ---: | ---: |";
  }
  md += "\n" + rule + "\n";
  for (const auto& [family, lines] : families) {
    md += fmt::format("| {} | {} |", cell(family), lines.size());
    for (std::size_t c = 0; c < t.peers.size(); ++c) {
      const Standing s = standing(lines, c);
      const bool any = !s.ratios.empty();
      md += fmt::format(" {} | {} | {} of {} |", any ? ratio_text(s.geomean()) : "-",
                        any ? ratio_text(*std::min_element(s.ratios.begin(), s.ratios.end())) : "-", s.good(),
                        s.ratios.size());
    }
    md += "\n";
  }
  return md;
}

std::string standing_lines(const Table& t, const std::vector<const Line*>& lines) {
  if (t.peers.empty()) return "No peer ran beside porta here.\n";
  std::string md;
  for (std::size_t c = 0; c < t.peers.size(); ++c) {
    const Standing s = standing(lines, c);
    md += fmt::format("- porta ÷ {}: ", t.peers[c]);
    md += s.ratios.empty() ? "no row to compare"
                           : fmt::format("{} of {} rows >= {:.2f}, geometric mean {}", s.good(), s.ratios.size(),
                                         good_ratio, ratio_text(s.geomean()));
    md += s.without ? fmt::format("; {} row{} without a ratio.\n", s.without, s.without == 1 ? "" : "s") : ".\n";
  }
  return md;
}

// What this table's marks stand for: why its eff rates are effective (a network's table shows times), and how
// many of its results are unverified, with how many results each: a summarised table lists only some.
std::string marks_note(const Merged& m, const Table& t) {
  std::map<std::string, int> reasons;
  int unchecked = 0;
  for (const Line& line : t.lines) {
    std::vector<const Point*> points = line.peers;
    points.push_back(line.native);
    for (const Point* p : points) {
      if (!p || p->status != "ok") continue;
      if (!is_network(t.kind) && !p->effective.empty()) ++reasons[p->effective];
      if (unverified(m, *p)) ++unchecked;
    }
  }
  const auto results = [](int n) { return fmt::format("{} result{}", n, n == 1 ? "" : "s"); };
  std::string md;
  for (const auto& [why, count] : reasons)
    md += fmt::format("{}{} ({})", md.empty() ? "`eff` here: " : "; ", why, results(count));
  if (!md.empty()) md += ".\n";
  if (unchecked) md += fmt::format("{}`unverified` here: {}.\n", md.empty() ? "" : "\n", results(unchecked));
  return md;
}

// The command as recorded, its program by file name: where it was built is no part of it.
std::string command_text(const std::string& command) {
  const std::size_t end = std::min(command.find(' '), command.size());
  return std::filesystem::path(command.substr(0, end)).filename().string() + command.substr(end);
}

// "Intel(R) Xeon(R) Processor, x86-64 AVX-512, 2 threads": the device's name, arch and (cpu) threads.
std::string device_text(const Platform& pf) {
  std::string device = pf.name;
  if (!pf.arch.empty()) device += (device.empty() ? "" : ", ") + pf.arch;
  if (pf.backend == "cpu" && pf.threads > 0)
    device += fmt::format(", {} thread{}", pf.threads, pf.threads == 1 ? "" : "s");
  return device;
}

std::string table_heading(const std::vector<ResultsInput>& inputs, const Merged& m, const Table& t) {
  const Platform& pf = m.platforms[t.platform];
  const Json& env = inputs[pf.input].doc["env"];
  const std::string device = device_text(pf);
  std::string md = fmt::format("### {}{}{}\n\n", pf.spec,
                               by_kind(t.area) ? fmt::format(" {}", kind_names[static_cast<int>(t.kind)]) : "",
                               device.empty() ? "" : ": " + device);
  const std::optional<double> host_threads = number_of(env, "threads");
  md += fmt::format("Host {}{}; {}, {}, revision {}:\n{}\n\n", cell(text_of(env, "hostname")),
                    host_threads ? fmt::format(" ({:.0f} hardware threads)", *host_threads) : "",
                    code(file_name(inputs[pf.input])), text_of(env, "date"), code(text_of(env, "git_revision")),
                    code(command_text(text_of(env, "command"))));
  return md;
}

// The rows below good_ratio of some peer.
std::vector<const Line*> rows_below_good(const std::vector<const Line*>& lines) {
  std::vector<const Line*> low;
  for (const Line* line : lines)
    for (const Point* peer : line->peers)
      if (const auto r = ratio(line->native, peer); r && *r < good_ratio) {
        low.push_back(line);
        break;
      }
  return low;
}

std::string render_table(const std::vector<ResultsInput>& inputs, const Merged& m, const Table& t,
                         std::size_t listed_rows) {
  std::vector<const Line*> lines;
  for (const Line& line : t.lines) lines.push_back(&line);
  std::string md = table_heading(inputs, m, t);
  if (lines.size() <= listed_rows) {
    md += rows_table(m, t, lines, true);
  } else {
    const std::vector<const Line*> low = rows_below_good(lines);
    md += fmt::format("{} rows, per workload family:\n\n{}\n", lines.size(), family_table(t, lines));
    md += low.empty() ? fmt::format("No row is below {:.2f} of a peer.\n", good_ratio)
                      : fmt::format("The rows below {:.2f} of a peer:\n\n{}", good_ratio, rows_table(m, t, low, false));
  }
  md += fmt::format("\n{}", standing_lines(t, lines));
  if (const std::string marks = marks_note(m, t); !marks.empty()) md += "\n" + marks;
  return md + "\n";
}

std::string header(const std::vector<ResultsInput>& inputs, std::size_t listed_rows) {
  return fmt::format(
      "<!-- Generated by `porta-bench report --markdown` from result files: do not edit by hand. -->\n"
      "# Benchmarks: where porta stands\n\n"
      "This page is generated by `porta-bench report --markdown OUT.md FILES...` from the {} result file{} below; "
      "do not edit it by hand. docs/benchmarks.md is made from docs/results/, one file per run, with\n"
      "`porta-bench report --markdown docs/benchmarks.md docs/results/*.json`; `scripts/standings` measures its runs "
      "again on a machine and regenerates it. How each number is measured: "
      "[bench/README.md](../bench/README.md).\n\n"
      "Each table is one device of one result file, with the command that made it. A ratio is porta's rate over the "
      "peer's on the same problem, which is the peer's median time over porta's, both from the same invocation: "
      "above 1 porta is faster. Each table gives, per peer, its rows at {:.2f} or more and the geometric "
      "mean; one of more than {} rows is summarised per workload family (the label's first part), with the rows "
      "below {:.2f} listed. GFLOP/s count 2 per multiply-add. `unverified`: a result not checked against the "
      "reference device (too slow to check, or not asked for). {}\n\n",
      inputs.size(), inputs.size() == 1 ? "" : "s", good_ratio, listed_rows, good_ratio,
      std::string(effective_rate_note).replace(0, 4, "`eff`:"));
}

std::string files_section(const std::vector<ResultsInput>& inputs) {
  std::vector<const ResultsInput*> sorted;
  for (const ResultsInput& in : inputs) sorted.push_back(&in);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return file_name(*a) < file_name(*b); });
  std::string md = "## Result files\n\n| file | host | date | revision | suite | rows |\n"
                   "| --- | --- | --- | --- | --- | ---: |\n";
  for (const ResultsInput* in : sorted) {
    const Json& env = in->doc["env"];
    const std::string suite = text_of(env, "suite");
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(file_name(*in)), cell(text_of(env, "hostname")),
                      text_of(env, "date"), cell(text_of(env, "git_revision")), suite.empty() ? "-" : cell(suite),
                      in->doc["results"].size());
  }
  return md + "\n";
}

}  // namespace

// One line per table with a peer: each peer's geometric mean and how many rows reach good_ratio. The
// README's "Where it stands" repeats these lines, which bench/test_standings.sh checks.
std::string summary_section(const Merged& m, const std::vector<Table>& tables) {
  std::string md;
  for (const Table& t : tables) {
    if (t.peers.empty()) continue;
    std::vector<const Line*> lines;
    for (const Line& line : t.lines) lines.push_back(&line);
    const Platform& pf = m.platforms[t.platform];
    md += fmt::format("- {}, {} ({}):", area_texts[static_cast<int>(t.area)].first,
                      by_kind(t.area) ? fmt::format("{} {}", pf.spec, kind_names[static_cast<int>(t.kind)])
                          : pf.spec,
                      device_text(pf));
    for (std::size_t c = 0; c < t.peers.size(); ++c) {
      const Standing st = standing(lines, c);
      if (st.ratios.empty()) continue;
      md += fmt::format("{} porta ÷ {} {} ({} of {} rows >= {:.2f})", c == 0 ? "" : ";", t.peers[c],
                        ratio_text(st.geomean()), st.good(), st.ratios.size(), good_ratio);
    }
    md += ".\n";
  }
  return md.empty() ? md : "## Summary\n\nGeometric means of porta's rate over each peer's, per table below.\n\n" + md + "\n";
}

std::string render_standings(const std::vector<ResultsInput>& inputs, std::size_t listed_rows) {
  const Merged m = merge(inputs);
  const std::vector<Table> tables = tables_of(m, inputs);
  std::string md = header(inputs, listed_rows) + summary_section(m, tables) + files_section(inputs);
  for (std::size_t area = 0; area < std::size(area_texts); ++area) {
    std::string section;
    for (const Table& t : tables)
      if (static_cast<std::size_t>(t.area) == area) section += render_table(inputs, m, t, listed_rows);
    if (!section.empty())
      md += fmt::format("## {}\n\n{}\n\n{}", area_texts[area].first, area_texts[area].second, section);
  }
  while (md.size() > 1 && md[md.size() - 2] == '\n') md.pop_back();  // one newline at the end
  return md;
}

}  // namespace porta::bench
