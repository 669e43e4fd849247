#include "scaling_model.hpp"

#include <algorithm>

namespace porta::bench {

std::vector<Link> assumed_links() {
  std::vector<Link> links{{"8 GPUs, PCIe 4 x16", 20.0, 8}, {"8 GPUs, PCIe 5 x16", 40.0, 8},
                          {"8 GPUs, NVLink through NVSwitch", 230.0, 8}};
  // A ring over every GPU crosses each node's NIC once each way, so the NIC is its slowest link.
  for (const std::int64_t nodes : {2, 4, 8, 16})
    links.push_back({std::to_string(nodes) + " nodes of 8 GPUs, 100 Gb/s NIC", 12.0, 8 * nodes});
  return links;
}

ScalingPrediction predict_scaling(double step_s, double gradient_bytes, const Link& link) {
  const double n = static_cast<double>(link.ranks);
  const double allreduce_s = link.ranks > 1 ? 2.0 * (n - 1.0) / n * gradient_bytes / (link.busbw_gbs * 1e9) : 0.0;
  const double exposed_s = std::max(0.0, allreduce_s - step_s * 2.0 / 3.0);
  return {allreduce_s, step_s / (step_s + allreduce_s), step_s / (step_s + exposed_s)};
}

}  // namespace porta::bench
