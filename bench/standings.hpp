#pragma once
// `porta-bench report --markdown OUT.md FILES...`: where porta stands against each peer present in
// result files (oneDNN, OpenBLAS, CLBlast, cuBLAS and cuDNN, PyTorch), per area, one table per
// device of each file. The same files give the same page byte for byte: docs/benchmarks.md is made
// from docs/results/*.json.
#include <string>
#include <vector>

#include "merged_results.hpp"

namespace porta::bench {

// A table of more than `listed_rows` rows is summarised per workload family, with the rows below 0.9
// of a peer listed.
std::string render_standings(const std::vector<ResultsInput>& inputs, std::size_t listed_rows = 30);

}  // namespace porta::bench
