#pragma once
// `porta-bench report RESULTS.json... -o report.html`: runs from one or many machines merged into
// one self-contained HTML page (inline CSS and SVG, no scripts, no network requests); with
// `--markdown OUT.md`, the standings page instead (standings.hpp).
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
  std::string output;    // the HTML page; report.html unless only the markdown page is asked for
  std::string markdown;  // the standings page (standings.hpp), when set
  std::size_t listed_rows = 30;
};
CLI::App* add_report_command(CLI::App& app, ReportArgs& args);
int run_report(const ReportArgs& args);  // throws porta::Error for an unreadable or malformed file

}  // namespace porta::bench
