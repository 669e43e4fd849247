#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "comm.hpp"
#include "job.hpp"
#include "peak.hpp"
#include "results_file.hpp"
#include "scaling_model.hpp"
#include "standings.hpp"

namespace porta::bench {
namespace {

const char* const palette[] = {"#2f6db5", "#d9822b", "#3a9a5b", "#c23b3b", "#7b5cb8", "#8c6d31", "#d16aa8", "#5f6b73"};
const char* colour(std::size_t i) { return palette[i % std::size(palette)]; }

std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string rate_text(double v) { return fmt::format("{:.1f}", v); }

std::string series_label(const Merged& m, const Point& p) {
  return p.impl == "native" || p.impl.empty() ? m.platforms[p.platform].label : m.platforms[p.platform].label + " " + p.impl;
}

// The meaning of "eff", where a rate on the page is effective.
std::string effective_note(const Merged& m) {
  const bool any = std::any_of(m.points.begin(), m.points.end(), [](const Point& p) { return !p.effective.empty(); });
  return any ? "<p>" + escape(effective_rate_note) + "</p>" : "";
}

// --- sections -----------------------------------------------------------------------------------

std::string inputs_section(const std::vector<ResultsInput>& inputs) {
  std::string h = "<h2>Inputs</h2><table><tr><th>file</th><th>host</th><th>date</th><th>suite</th><th>revision</th>"
                  "<th>command</th></tr>";
  for (const ResultsInput& in : inputs) {
    const Json& env = in.doc["env"];
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                     escape(in.name), escape(text_of(env, "hostname")), escape(text_of(env, "date")),
                     escape(text_of(env, "suite")), escape(text_of(env, "git_revision")), escape(text_of(env, "command")));
  }
  return h + "</table>";
}

std::string devices_section(const Merged& m) {
  std::string h = "<h2>Devices and measured ceilings</h2><table><tr><th>platform</th><th>device</th><th>backend</th>"
                  "<th>bandwidth GB/s</th><th>compute GFLOP/s</th><th>launch &micro;s</th><th>measured by</th></tr>";
  for (const Platform& p : m.platforms) {
    std::string compute;
    for (const auto& [dtype, g] : p.ceilings.compute_ceilings())
      compute += fmt::format("{}{} {}", compute.empty() ? "" : ", ", dtype, rate_text(g));
    const auto bw = p.ceilings.bandwidth_gbs();
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=num>{}</td><td>{}</td><td class=num>{}</td><td>{}</td></tr>",
                     escape(p.label), escape(p.name), escape(p.backend), bw ? rate_text(*bw) : "-",
                     compute.empty() ? "-" : escape(compute),
                     p.ceilings.launch_s ? fmt::format("{:.1f}", *p.ceilings.launch_s * 1e6) : "-",
                     escape(p.ceilings.source.empty() ? "not measured" : p.ceilings.source));
  }
  return h + "</table>";
}

// Horizontal bars, one per device/backend/impl, for each problem.
std::string bars_section(const Merged& m) {
  std::vector<std::string> series;
  for (const Point& p : m.points)
    if (std::find(series.begin(), series.end(), series_label(m, p)) == series.end()) series.push_back(series_label(m, p));
  std::string h = "<h2>GFLOP/s per workload</h2><p>Median rate of each device, backend and provider; a row that did "
                  "not run says why.</p>" + effective_note(m) + "<div class=bars>";
  const int label_w = 230, bar_w = 330, row_h = 20;
  for (const std::string& problem : m.problems) {
    std::vector<const Point*> pts;
    double top = 0.0;
    for (const Point& p : m.points)
      if (p.problem == problem) {
        pts.push_back(&p);
        if (p.gflops) top = std::max(top, *p.gflops);
      }
    const int height = static_cast<int>(pts.size()) * row_h + 8;
    h += fmt::format("<figure><figcaption>{}</figcaption><svg width=\"{}\" height=\"{}\" role=\"img\">", escape(problem),
                     label_w + bar_w + 120, height);
    int y = 4;
    for (const Point* p : pts) {
      const std::string label = series_label(m, *p);
      const std::size_t s = static_cast<std::size_t>(std::find(series.begin(), series.end(), label) - series.begin());
      h += fmt::format("<g class=\"bar\" data-problem=\"{}\" data-series=\"{}\"", escape(problem), escape(label));
      if (p->gflops) h += fmt::format(" data-gflops=\"{}\"", rate_text(*p->gflops));
      h += fmt::format("><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_w - 6, y + 14, escape(label));
      if (p->status == "ok" && p->gflops) {
        const double w = top > 0.0 ? std::max(1.0, bar_w * *p->gflops / top) : 1.0;
        h += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>"
                         "<text x=\"{:.1f}\" y=\"{}\">{}{}</text>",
                         label_w, y + 2, w, row_h - 4, colour(s), label_w + w + 4, y + 14, rate_text(*p->gflops),
                         p->effective.empty() ? "" : " eff<title>effective: " + escape(p->effective) + "</title>");
      } else {
        const std::string why = p->status + (p->reason.empty() ? "" : ": " + p->reason);
        h += fmt::format("<text x=\"{}\" y=\"{}\" class=\"muted\">{}<title>{}</title></text>", label_w, y + 14,
                         escape(why.substr(0, 60) + (why.size() > 60 ? "..." : "")), escape(why));
      }
      h += "</g>";
      y += row_h;
    }
    h += "</svg></figure>";
  }
  return h + "</div>";
}

// What each device and provider ran for each workload, where its kernels reported their plans (the
// rows' `algo`); nothing where none did.
std::string algo_section(const Merged& m) {
  std::string rows;
  for (const std::string& problem : m.problems)
    for (const Point& p : m.points)
      if (p.problem == problem && !p.algo.empty())
        rows += fmt::format("<tr><td>{}</td><td>{}</td><td><code>{}</code></td></tr>", escape(problem),
                            escape(series_label(m, p)), escape(p.algo));
  if (rows.empty()) return {};
  return "<h2>What ran</h2><p>The plan each kernel chose on the problem's first run, as <code>PORTA_VERBOSE=1</code> "
         "prints it (backends/cpu/plans/README.md says what the fields mean).</p><table class=algo><tr>"
         "<th>workload</th><th>device and provider</th><th>plan</th></tr>" +
         rows + "</table>";
}

// Log-log roofline of one platform: its bandwidth and compute ceilings and its measured points.
std::string roofline_svg(const Merged& m, std::size_t platform) {
  const Platform& pf = m.platforms[platform];
  const std::optional<double> bw = pf.ceilings.bandwidth_gbs();
  const std::map<std::string, double> compute = pf.ceilings.compute_ceilings();
  std::vector<const Point*> pts;
  for (const Point& p : m.points)
    if (p.platform == platform && p.status == "ok" && p.ai && p.gflops && *p.ai > 0 && *p.gflops > 0) pts.push_back(&p);
  if (pts.empty() && compute.empty()) return {};
  double x0 = 0.1, x1 = 100.0, y0 = 1e30, y1 = 0.0;
  for (const Point* p : pts) {
    x0 = std::min(x0, *p->ai / 2), x1 = std::max(x1, *p->ai * 2);
    y0 = std::min(y0, *p->gflops / 2), y1 = std::max(y1, *p->gflops * 2);
  }
  for (const auto& [dtype, g] : compute) {
    y1 = std::max(y1, g * 2), y0 = std::min(y0, g / 20);
    if (bw) x1 = std::max(x1, g / *bw * 4);
  }
  if (bw) y0 = std::min(y0, *bw * x0);
  x0 = std::pow(10.0, std::floor(std::log10(x0))), x1 = std::pow(10.0, std::ceil(std::log10(x1)));
  y0 = std::pow(10.0, std::floor(std::log10(y0))), y1 = std::pow(10.0, std::ceil(std::log10(y1)));
  const double W = 560, H = 340, L = 60, B = 60, T = 10, R = 150;
  const auto X = [&](double v) { return L + (std::log10(v) - std::log10(x0)) / (std::log10(x1) - std::log10(x0)) * W; };
  const auto Y = [&](double v) { return T + H - (std::log10(v) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)) * H; };
  std::string s = fmt::format("<svg class=\"roofline\" data-platform=\"{}\" width=\"{}\" height=\"{}\" role=\"img\">",
                              escape(pf.label), L + W + R, T + H + B);
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"plot\"/>", L, T, W, H);
  for (double v = x0; v <= x1 * 1.01; v *= 10)
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/><text x=\"{0:.1f}\" y=\"{3}\" "
                     "text-anchor=\"middle\">{4:g}</text>", X(v), T, T + H, T + H + 16, v);
  for (double v = y0; v <= y1 * 1.01; v *= 10)
    s += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/><text x=\"{3}\" y=\"{4:.1f}\" "
                     "text-anchor=\"end\">{5:g}</text>", L, L + W, Y(v), L - 4, Y(v) + 4, v);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>", L + W / 2, T + H + 34);
  s += fmt::format("<text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">GFLOP/s</text>", T + H / 2);
  std::vector<std::string> dtypes;
  for (const auto& [dtype, g] : compute) dtypes.push_back(dtype);
  for (const Point* p : pts)
    if (std::find(dtypes.begin(), dtypes.end(), p->dtype) == dtypes.end()) dtypes.push_back(p->dtype);
  const auto dtype_colour = [&](const std::string& d) {
    return colour(static_cast<std::size_t>(std::find(dtypes.begin(), dtypes.end(), d) - dtypes.begin()));
  };
  std::vector<std::pair<double, std::string>> labels;  // compute ceilings' labels, kept apart below
  for (const auto& [dtype, g] : compute) {
    const double ridge = bw ? g / *bw : x0;
    if (bw) s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"roof\"/>", X(x0),
                             Y(*bw * x0), X(std::max(ridge, x0)), Y(g));
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"roof\" style=\"stroke:{}\"/>",
                     X(std::max(ridge, x0)), Y(g), X(x1), Y(g), dtype_colour(dtype));
    labels.push_back({Y(g) + 4, fmt::format("<text x=\"{:.1f}\" y=\"{{:.1f}}\" class=\"roof-label\" style=\"fill:{}\">{} {} GFLOP/s</text>",
                                            L + W + 4, dtype_colour(dtype), dtype, rate_text(g))});
  }
  std::sort(labels.begin(), labels.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < labels.size(); ++i) labels[i].first = std::max(labels[i].first, labels[i - 1].first + 14);
  for (const auto& [y, text] : labels) s += fmt::format(fmt::runtime(text), y);
  if (bw) {
    const double ridge = compute.empty() ? x1 : compute.begin()->second / *bw;
    const double at = std::sqrt(x0 * std::clamp(ridge, x0, x1));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"roof-label\">{} GB/s</text>", X(at) + 8, Y(*bw * at) + 6,
                     rate_text(*bw));
  }
  for (const Point* p : pts) {
    // An effective rate is a ring: it may stand above a ceiling the device's arithmetic did not pass.
    const std::string fill = p->effective.empty()
                                 ? fmt::format("fill=\"{}\"{}", dtype_colour(p->dtype),
                                               p->impl == "native" ? "" : " fill-opacity=\"0.45\"")
                                 : fmt::format("fill=\"none\" style=\"stroke:{};stroke-width:2\"",
                                               dtype_colour(p->dtype));
    s += fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" {}><title>{} ({}): {} GFLOP/s{} at "
                     "{:.2f} FLOP/byte</title></circle>",
                     X(*p->ai), Y(*p->gflops), fill, escape(p->problem), escape(p->impl), rate_text(*p->gflops),
                     p->effective.empty() ? "" : " effective (" + escape(p->effective) + ")", *p->ai);
  }
  double lx = L;  // the legend: one entry per dtype under the axis title
  for (const std::string& d : dtypes) {
    s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>", lx + 4,
                     T + H + 50, dtype_colour(d), lx + 12, T + H + 54, d);
    lx += 60;
  }
  return s + "</svg>";
}

std::string rooflines_section(const Merged& m) {
  std::string h = "<h2>Roofline per device</h2><p>Ceilings measured on the device itself (best stream "
                  "bandwidth; best GEMM rate per dtype). Solid points: native kernels; pale: vendor; rings: "
                  "effective rates.</p>" + effective_note(m);
  for (std::size_t i = 0; i < m.platforms.size(); ++i) {
    const std::string svg = roofline_svg(m, i);
    h += fmt::format("<figure><figcaption>{}</figcaption>{}</figure>", escape(m.platforms[i].label),
                     svg.empty() ? "<p class=muted>no ceilings or points to place</p>" : svg);
  }
  return h;
}

std::optional<double> rate(const Merged& m, const std::string& problem, std::size_t platform, const std::string& impl) {
  for (const Point& p : m.points)
    if (p.problem == problem && p.platform == platform && p.impl == impl && p.status == "ok" && p.gflops) return p.gflops;
  return std::nullopt;
}

// Ratios of `num` over `den` rates per problem, with their geometric mean.
std::string speedup_table(const Merged& m, const std::string& caption,
                          const std::vector<std::pair<std::string, std::pair<std::pair<std::size_t, std::string>,
                                                                             std::pair<std::size_t, std::string>>>>& columns) {
  if (columns.empty()) return {};
  std::string h = fmt::format("<table class=speedup><caption>{}</caption><tr><th>workload</th>", escape(caption));
  for (const auto& c : columns) h += "<th>" + escape(c.first) + "</th>";
  h += "</tr>";
  std::vector<double> log_sum(columns.size(), 0.0);
  std::vector<int> count(columns.size(), 0);
  for (const std::string& problem : m.problems) {
    std::string line = "<tr><td>" + escape(problem) + "</td>";
    bool any = false;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto& [num, den] = columns[c].second;
      const auto a = rate(m, problem, num.first, num.second), b = rate(m, problem, den.first, den.second);
      if (a && b && *b > 0) {
        line += fmt::format("<td class=num>{:.2f}</td>", *a / *b);
        log_sum[c] += std::log(*a / *b), ++count[c], any = true;
      } else {
        line += "<td class=num>-</td>";
      }
    }
    if (any) h += line + "</tr>";
  }
  h += "<tr class=total><td>geometric mean</td>";
  for (std::size_t c = 0; c < columns.size(); ++c)
    h += count[c] ? fmt::format("<td class=num>{:.2f}</td>", std::exp(log_sum[c] / count[c])) : "<td class=num>-</td>";
  return h + "</tr></table>";
}

std::string speedups_section(const Merged& m) {
  using Column = std::pair<std::string, std::pair<std::pair<std::size_t, std::string>, std::pair<std::size_t, std::string>>>;
  std::optional<std::size_t> cpu;
  for (std::size_t i = 0; i < m.platforms.size() && !cpu; ++i)
    if (m.platforms[i].backend == "cpu") cpu = i;
  std::vector<Column> vs_cpu, vendor;
  for (std::size_t i = 0; i < m.platforms.size(); ++i) {
    if (cpu && i != *cpu)
      vs_cpu.push_back({m.platforms[i].label + " / " + m.platforms[*cpu].label, {{i, "native"}, {*cpu, "native"}}});
    bool has_vendor = false;
    for (const Point& p : m.points) has_vendor = has_vendor || (p.platform == i && p.impl == "vendor" && p.status == "ok");
    if (has_vendor) vendor.push_back({m.platforms[i].label + " vendor / native", {{i, "vendor"}, {i, "native"}}});
  }
  std::string h = "<h2>Speedups</h2><p>Ratios of median GFLOP/s; above 1 the first is faster.</p>";
  h += cpu ? speedup_table(m, "Each device over the CPU backend (native kernels)", vs_cpu) : "";
  h += speedup_table(m, "Vendor library over porta's native kernels, per device", vendor);
  if ((!cpu || vs_cpu.empty()) && vendor.empty()) h += "<p class=muted>One device and one provider: nothing to compare.</p>";
  return h;
}

// Pennycook et al.'s performance portability: the harmonic mean of a provider's efficiencies over
// every platform present, zero where any platform has no result for it.
std::string portability_section(const Merged& m) {
  std::set<std::string> impls;
  for (const Point& p : m.points) impls.insert(p.impl);
  std::string h = "<h2>Performance portability</h2><p>Per workload and provider, over the " +
                  std::to_string(m.platforms.size()) +
                  " platforms present: the harmonic mean of the efficiencies, 0 where any platform has no result. "
                  "<b>Architectural</b> efficiency is the rate over the device's measured compute ceiling for the "
                  "dtype; <b>application</b> efficiency is the rate over the best rate any provider reached on that "
                  "platform for the workload.</p><table class=pp><tr><th>workload</th>";
  for (const std::string& impl : impls) h += fmt::format("<th>{0} architectural</th><th>{0} application</th>", escape(impl));
  h += "</tr>";
  for (const std::string& problem : m.problems) {
    h += "<tr><td>" + escape(problem) + "</td>";
    for (const std::string& impl : impls) {
      double inv_arch = 0.0, inv_app = 0.0;
      bool arch_ok = true, app_ok = true, arch_effective = false;
      std::string missing;
      for (std::size_t i = 0; i < m.platforms.size(); ++i) {
        double best = 0.0;
        for (const Point& p : m.points)
          if (p.problem == problem && p.platform == i && p.status == "ok" && p.gflops) best = std::max(best, *p.gflops);
        const Point* mine = nullptr;
        for (const Point& p : m.points)
          if (p.problem == problem && p.platform == i && p.impl == impl && p.status == "ok" && p.gflops) mine = &p;
        if (!mine) {
          arch_ok = app_ok = false;
          if (missing.empty()) missing = m.platforms[i].label;
          continue;
        }
        inv_app += best / *mine->gflops;
        arch_effective = arch_effective || !mine->effective.empty();
        if (mine->pct_peak && *mine->pct_peak > 0) inv_arch += 100.0 / *mine->pct_peak;
        else arch_ok = false;
      }
      const double n = static_cast<double>(m.platforms.size());
      const auto cell = [&](bool ok, double inv, bool effective) {
        if (!missing.empty()) return fmt::format("<td class=num title=\"no result on {}\">0</td>", escape(missing));
        if (!ok) return std::string("<td class=num title=\"no measured ceiling\">-</td>");
        return fmt::format("<td class=num>{:.2f}{}</td>", n / inv, effective ? " eff" : "");
      };
      h += cell(arch_ok, inv_arch, arch_effective) + cell(app_ok, inv_app, false);
    }
    h += "</tr>";
  }
  return h + "</table>";
}

// Bus bandwidth against buffer size, a chart per collective (porta-bench comm), and the copies'
// bandwidth: a line per transport, dtype and provider (device, direction and host memory for
// copies), and per file; the buffer size on a log scale.
struct CommSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (bytes, busbw GB/s)
};

std::string comm_chart(const std::string& op, const std::vector<CommSeries>& series) {
  double x0 = 1e30, x1 = 0.0, top = 0.0;
  for (const CommSeries& s : series)
    for (const auto& [bytes, gbs] : s.points)
      x0 = std::min(x0, bytes), x1 = std::max(x1, bytes), top = std::max(top, gbs);
  x0 = std::exp2(std::floor(std::log2(x0))), x1 = std::exp2(std::ceil(std::log2(x1)) + (x0 == x1 ? 1 : 0));
  top = top > 0.0 ? top * 1.1 : 1.0;
  const double W = 560, H = 260, L = 60, B = 50, T = 10, R = 320;
  const auto X = [&](double v) { return L + (std::log2(v) - std::log2(x0)) / (std::log2(x1) - std::log2(x0)) * W; };
  const auto Y = [&](double v) { return T + H - v / top * H; };
  std::string h = fmt::format("<figure><figcaption>{}</figcaption><svg class=\"comm\" data-op=\"{}\" "
                              "width=\"{}\" height=\"{}\" role=\"img\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
                              "height=\"{}\" class=\"plot\"/>",
                              escape(op), escape(op), L + W + R, T + H + B, L, T, W, H);
  for (double v = x0; v <= x1; v *= 16)
    h += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/><text x=\"{0:.1f}\" "
                     "y=\"{3}\" text-anchor=\"middle\">{4}</text>", X(v), T, T + H, T + H + 16,
                     escape(size_text(static_cast<std::uint64_t>(v))));
  for (int i = 0; i <= 4; ++i)
    h += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/><text x=\"{3}\" "
                     "y=\"{4:.1f}\" text-anchor=\"end\">{5:.2g}</text>",
                     L, L + W, Y(top * i / 4), L - 4, Y(top * i / 4) + 4, top * i / 4);
  h += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">buffer size</text>"
                   "<text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">GB/s</text>",
                   L + W / 2, T + H + 36, T + H / 2);
  for (std::size_t i = 0; i < series.size(); ++i) {
    std::string path;
    for (const auto& [bytes, gbs] : series[i].points) path += fmt::format("{:.1f},{:.1f} ", X(bytes), Y(gbs));
    h += fmt::format("<polyline class=\"series\" data-series=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
                     "stroke-width=\"2\"/><text x=\"{}\" y=\"{}\" style=\"fill:{}\">{}</text>",
                     escape(series[i].label), path, colour(i), L + W + 8, T + 14 + 16 * i, colour(i),
                     escape(series[i].label));
  }
  return h + "</svg></figure>";
}

std::string comm_section(const std::vector<ResultsInput>& inputs) {
  const auto has_comm = [](const ResultsInput& in) {
    const Json& rows = in.doc["results"];
    return std::any_of(rows.begin(), rows.end(), [](const Json& row) { return is_comm_op(text_of(row, "op")); });
  };
  const bool several = std::count_if(inputs.begin(), inputs.end(), has_comm) > 1;  // then name the file
  std::vector<std::string> ops;
  std::map<std::string, std::vector<CommSeries>> by_op;
  for (const ResultsInput& in : inputs)
    for (const Json& row : in.doc["results"]) {
      const std::string op = text_of(row, "op");
      const bool copy = !number_of(row, "busbw_gbs");
      const auto bytes = number_of(row, "bytes"), gbs = number_of(row, copy ? "gbs" : "busbw_gbs");
      if (!is_comm_op(op) || text_of(row, "status") != "ok" || !bytes || !gbs) continue;
      const std::string impl = text_of(row, "impl"), chart = copy ? "host-device copies (GB/s)" : op;
      std::string label = copy ? text_of(row, "device") + " " + op + " " + impl
                               : text_of(row, "backend") + " " + text_of(row, "dtype");
      if (!copy && impl != "native") label += " " + impl;
      if (several) label += " [" + in.name + "]";
      if (std::find(ops.begin(), ops.end(), chart) == ops.end()) ops.push_back(chart);
      std::vector<CommSeries>& series = by_op[chart];
      auto it = std::find_if(series.begin(), series.end(), [&](const CommSeries& s) { return s.label == label; });
      if (it == series.end()) it = series.insert(series.end(), CommSeries{label, {}});
      it->points.emplace_back(*bytes, *gbs);
    }
  if (ops.empty()) return {};
  std::string h = "<h2>Collectives and copies</h2><p>Collectives: bus bandwidth as nccl-tests defines it, the "
                  "algorithm bandwidth (bytes over time) times 2(n-1)/n for allreduce, (n-1)/n for allgather and "
                  "reduce-scatter, 1 for broadcast, over n ranks; every result checked against a serial computation. "
                  "Copies: bytes over time of the runtime's blocking copy, from pinned or pageable host memory.</p>";
  for (const std::string& op : ops) h += comm_chart(op, by_op[op]);
  return h;
}

// porta-bench train --data-parallel's rows (bench/train_parallel.hpp): images/s on N ranks against
// the 1-rank run (of the same global batch, or of one rank's batch with --scaling weak), and where
// each step's time went on the slowest rank.
std::string scaling_section(const std::vector<ResultsInput>& inputs) {
  std::string rows;
  for (const ResultsInput& in : inputs)
    for (const Json& row : in.doc["results"]) {
      const bool parallel = row.contains("params") && row["params"].is_object() &&
                            row["params"].value("data_parallel", false);
      if (!parallel || text_of(row, "status") != "ok") continue;
      const Json& p = row["params"];
      const auto cell = [&](const char* key, const char* format, double scale = 1.0) {
        const auto v = number_of(p, key);
        return v ? fmt::format(fmt::runtime(format), *v * scale) : std::string("-");
      };
      rows += fmt::format("<tr data-efficiency=\"{}\"><td>{}</td><td>{}</td>", cell("scaling_efficiency", "{:.3f}"),
                          escape(text_of(row, "workload")), escape(text_of(row, "device")));
      for (const auto& [key, format, scale] :
           {std::tuple{"ranks", "{:.0f}", 1.0}, {"batch_per_rank", "{:.0f}", 1.0}, {"images_per_s", "{:.1f}", 1.0},
            {"baseline_batch", "{:.0f}", 1.0}, {"baseline_images_per_s", "{:.1f}", 1.0},
            {"scaling_efficiency", "{:.2f}", 1.0},
            {"step_backward_s", "{:.1f}", 1e3}, {"step_allreduce_s", "{:.1f}", 1e3}, {"step_update_s", "{:.1f}", 1e3}})
        rows += "<td class=\"num\">" + cell(key, format, scale) + "</td>";
      rows += "</tr>";
    }
  if (rows.empty()) return {};
  return "<h2>Data-parallel training</h2><p>Each rank trains on its shard of the global batch and the gradients are "
         "averaged by allreduce; scaling efficiency is images/s over ranks times the images/s of one rank training "
         "alone, the same global batch (strong scaling) or one rank's batch (weak), at the 1-rank batch shown "
         "(1: the ranks lose nothing). Step times are the slowest rank's, in ms.</p>"
         "<table><tr><th>workload</th><th>device</th><th>ranks</th><th>batch per rank</th><th>images/s</th>"
         "<th>1-rank batch</th><th>1 rank images/s</th><th>scaling efficiency</th><th>forward + backward</th>"
         "<th>allreduce</th>"
         "<th>update</th></tr>" + rows + "</table>";
}

// The allreduce bus bandwidths that `comm` rows of `in` measured: for each transport, f32 at the largest size.
std::vector<Link> measured_links(const ResultsInput& in) {
  std::map<std::string, std::pair<double, Link>> largest;  // transport -> (bytes, link)
  for (const Json& row : in.doc["results"]) {
    if (text_of(row, "op") != "allreduce" || text_of(row, "dtype") != "f32" || text_of(row, "status") != "ok" ||
        !row.contains("params"))
      continue;
    const auto bytes = number_of(row, "bytes"), busbw = number_of(row, "busbw_gbs");
    const std::int64_t ranks = row["params"].value("ranks", std::int64_t{0});
    if (!bytes || !busbw || ranks < 2) continue;
    const std::string transport = text_of(row, "backend");
    auto [it, fresh] = largest.try_emplace(transport);
    if (!fresh && it->second.first >= *bytes) continue;
    it->second = {*bytes, {fmt::format("measured: {} allreduce of {:.0f} MiB", transport, *bytes / (1 << 20)), *busbw,
                           ranks, true}};
  }
  std::vector<Link> links;
  for (const auto& [transport, entry] : largest) links.push_back(entry.second);
  return links;
}

// For each single-process train row with its gradients' size: the efficiency predicted on the assumed
// links and on those the same file's `comm` rows measured (bench/scaling_model.hpp).
std::string scaling_model_section(const std::vector<ResultsInput>& inputs) {
  std::string tables;
  for (const ResultsInput& in : inputs) {
    std::vector<Link> links = assumed_links();
    for (Link& l : measured_links(in)) links.push_back(std::move(l));
    for (const Json& row : in.doc["results"]) {
      if (text_of(row, "op") != "train" || text_of(row, "status") != "ok" || !row.contains("params")) continue;
      const Json& p = row["params"];
      const auto epoch_s = number_of(row, "median_s"), steps = number_of(p, "steps_per_epoch"),
                 bytes = number_of(p, "gradient_bytes");
      if (!epoch_s || !steps || !bytes || *steps <= 0 || p.value("data_parallel", false)) continue;
      const double step_s = *epoch_s / *steps;
      tables += fmt::format("<table><caption>{} on {}: a step of {:.1f} ms, {:.1f} MB of gradients</caption><tr>"
                            "<th>link</th><th>ranks</th><th>bus GB/s</th><th>allreduce ms</th><th>efficiency</th>"
                            "<th>overlapped</th></tr>",
                            escape(text_of(row, "workload")), escape(text_of(row, "device")), step_s * 1e3,
                            *bytes / 1e6);
      for (const Link& l : links) {
        const ScalingPrediction s = predict_scaling(step_s, *bytes, l);
        tables += fmt::format("<tr><td{}>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}</td>"
                              "<td class=\"num\">{:.1f}</td><td class=\"num\">{:.2f}</td><td class=\"num\">{:.2f}"
                              "</td></tr>",
                              l.measured ? "" : " class=\"muted\"", escape(l.name), l.ranks, l.busbw_gbs,
                              s.allreduce_s * 1e3, s.efficiency, s.efficiency_overlapped);
      }
      tables += "</table>";
    }
  }
  if (tables.empty()) return {};
  return "<h2>Data-parallel scaling on paper</h2><p>Predicted from each measured training step (weak scaling: the "
         "same batch per rank) and a ring allreduce of the gradients, 2(n-1)/n &times; bytes / bus bandwidth; "
         "<em>efficiency</em> adds the allreduce to the step, <em>overlapped</em> hides it behind the backward pass, "
         "taken as 2/3 of the step. Grey rows are assumed bandwidths (docs/cluster.md says which and why), the "
         "others measured by <code>porta-bench comm</code> in the same file. A prediction, not a measurement.</p>" +
         tables;
}

// The train rows (porta-bench train, the train suite): images/s of each network's last epoch on each
// device, one chart per workload; a cpu row followed by PyTorch's of the same workload (as
// train_with_references writes them) is labelled with PyTorch's epoch time over porta's.
struct TrainBar {
  std::string label;
  double images_per_s = 0.0, epoch_s = 0.0;
  std::string note;
};

std::string train_chart(const std::string& workload, const std::vector<TrainBar>& bars) {
  double top = 0.0;
  for (const TrainBar& b : bars) top = std::max(top, b.images_per_s);
  const int label_w = 260, bar_w = 330, row_h = 20;
  std::string h = fmt::format("<figure><figcaption>{} (images/s)</figcaption><svg class=\"train\" width=\"{}\" "
                              "height=\"{}\" role=\"img\">", escape(workload), label_w + bar_w + 200,
                              static_cast<int>(bars.size()) * row_h + 8);
  int y = 4;
  for (std::size_t i = 0; i < bars.size(); ++i, y += row_h) {
    const TrainBar& b = bars[i];
    const double w = top > 0.0 ? std::max(1.0, bar_w * b.images_per_s / top) : 1.0;
    h += fmt::format("<g class=\"bar\" data-series=\"{0}\" data-images-per-s=\"{1:.1f}\"><text x=\"{2}\" y=\"{3}\" "
                     "text-anchor=\"end\">{0}</text><rect x=\"{4}\" y=\"{5}\" width=\"{6:.1f}\" height=\"{7}\" "
                     "fill=\"{8}\"/><text x=\"{9:.1f}\" y=\"{3}\">{1:.1f}{10}</text></g>",
                     escape(b.label), b.images_per_s, label_w - 6, y + 14, label_w, y + 2, w, row_h - 4, colour(i),
                     label_w + w + 4, escape(b.note));
  }
  return h + "</svg></figure>";
}

std::string train_section(const std::vector<ResultsInput>& inputs) {
  std::vector<std::string> workloads;
  std::map<std::string, std::vector<TrainBar>> by_workload;
  for (const ResultsInput& in : inputs) {
    std::optional<std::pair<std::string, std::size_t>> cpu;  // the last cpu bar, which a PyTorch row may follow
    for (const Json& row : in.doc["results"]) {
      const auto epoch_s = number_of(row, "median_s");
      const auto images_per_s = row.contains("params") ? number_of(row["params"], "images_per_s") : std::nullopt;
      if (text_of(row, "op") != "train" || text_of(row, "status") != "ok" || !epoch_s || !images_per_s) continue;
      const std::string workload = text_of(row, "workload"), backend = text_of(row, "backend");
      std::string label = text_of(row, "device") + (inputs.size() > 1 ? " [" + in.name + "]" : "");
      if (std::find(workloads.begin(), workloads.end(), workload) == workloads.end()) workloads.push_back(workload);
      std::vector<TrainBar>& bars = by_workload[workload];
      bars.push_back({std::move(label), *images_per_s, *epoch_s, {}});
      if (backend == "pytorch" && cpu && cpu->first == workload) {
        TrainBar& porta = bars[cpu->second];
        porta.note = fmt::format(", {:.2f}x PyTorch", bars.back().epoch_s / porta.epoch_s);
      }
      cpu.reset();
      if (backend == "cpu") cpu.emplace(workload, bars.size() - 1);
    }
  }
  if (workloads.empty()) return {};
  std::string h = "<h2>Training</h2><p>Images/s of the last epoch of training steps (forward, backward and SGD "
                  "update) on synthetic data; beside a cpu device, PyTorch eager's training step on as many threads "
                  "and its epoch time over porta's (above 1: porta is faster).</p>";
  for (const std::string& w : workloads) h += train_chart(w, by_workload[w]);
  return h;
}

const char* const style = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums}tr.total td{font-weight:600;background:#fafafa}
caption{text-align:left;font-weight:600;padding:4px 0}code{font-size:12px}
figure{margin:8px 0 14px}figcaption{font-weight:600;margin-bottom:2px}
svg text{font:12px system-ui,sans-serif;fill:#222}svg text.muted,.muted{fill:#888;color:#888}
.plot{fill:#fcfcfd;stroke:#bbb}.grid{stroke:#e6e6e6}.roof{stroke:#444;stroke-width:2}.roof-label{font-weight:600}
.point{stroke:#fff;stroke-width:1}
)";

}  // namespace

std::string render_report(const std::vector<ResultsInput>& files) {
  const std::vector<ResultsInput> inputs = split_ranks(files);  // a job's ranks side by side, as files
  const Merged m = merge(inputs);
  std::string h = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>porta-bench report</title>"
                  "<meta name=\"viewport\" content=\"width=device-width\"><style>";
  h += style;
  h += fmt::format("</style></head><body><h1>porta-bench report</h1><p>{} result file{}, {} platform{}, {} workload{}.</p>",
                   inputs.size(), inputs.size() == 1 ? "" : "s", m.platforms.size(), m.platforms.size() == 1 ? "" : "s",
                   m.problems.size(), m.problems.size() == 1 ? "" : "s");
  const std::string comm = comm_section(inputs);
  h += inputs_section(inputs) + (m.platforms.empty() ? "" : devices_section(m));
  if (comm.empty() || !m.problems.empty())  // a page of collectives alone has no GFLOP/s to show
    h += bars_section(m) + algo_section(m) + rooflines_section(m) + speedups_section(m) + portability_section(m);
  h += train_section(inputs) + scaling_section(inputs) + scaling_model_section(inputs) + comm;
  return h + "</body></html>\n";
}

namespace {

// Writes `text` to `path`, or throws porta::Error(IoError).
void write_page(const std::string& text, const std::filesystem::path& path) {
  std::ofstream file(path);
  file << text;
  file.flush();
  if (!file) throw Error(ErrorCode::IoError, fmt::format("cannot write '{}'", path.string()));
}

}  // namespace

void write_report(const std::vector<ResultsInput>& inputs, const std::filesystem::path& path) {
  write_page(render_report(inputs), path);
}

CLI::App* add_report_command(CLI::App& app, ReportArgs& args) {
  auto* cmd = app.add_subcommand("report", "Merge result files (from one or many machines) into one HTML page, or the "
                                           "markdown standings page (docs/benchmarks.md)");
  cmd->add_option("files", args.files, "porta-bench result files (results.json)")->required();
  cmd->add_option("-o,--output", args.output, "The HTML page to write (default: report.html, unless --markdown)");
  auto* markdown =
      cmd->add_option("--markdown", args.markdown, "Write the standings page against each peer present, as markdown");
  cmd->add_option("--listed-rows", args.listed_rows,
                  "With --markdown: tables of more rows are summarised per workload family, their low rows listed")
      ->check(CLI::PositiveNumber)->needs(markdown)->capture_default_str();
  return cmd;
}

int run_report(const ReportArgs& args) {
  std::vector<ResultsInput> inputs;
  for (const std::string& file : args.files)
    inputs.push_back({file, load_results(file)});
  if (!args.markdown.empty()) {
    write_page(render_standings(inputs, args.listed_rows), args.markdown);
    fmt::print("Standings: {}\n", args.markdown);
  }
  if (args.markdown.empty() || !args.output.empty()) {
    const std::string html = args.output.empty() ? "report.html" : args.output;
    write_report(inputs, html);
    fmt::print("Report: {}\n", html);
  }
  return 0;
}

}  // namespace porta::bench
