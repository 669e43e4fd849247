#pragma once
// `porta-bench report RESULTS.json... -o report.html`: runs from one or many machines merged into
// one self-contained HTML page (inline CSS and SVG, no scripts, no network requests).
#include <filesystem>
#include <string>
#include <vector>

#include "merged_results.hpp"

namespace CLI {
class App;
}

namespace porta::bench {

std::string render_report(const std::vector<ResultsInput>& inputs);
void write_report(const std::vector<ResultsInput>& inputs, const std::filesystem::path& path);

struct ReportArgs {
  std::vector<std::string> files;
  std::string output = "report.html";
};
CLI::App* add_report_command(CLI::App& app, ReportArgs& args);
int run_report(const ReportArgs& args);  // throws porta::Error for an unreadable or malformed file

}  // namespace porta::bench
