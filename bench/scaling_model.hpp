#pragma once
// Data-parallel training's efficiency on N ranks, predicted from one rank's measured training step
// and a bus bandwidth (docs/cluster.md, "Scaling on paper"): each step computes for step_s, then the
// gradients are summed by a ring allreduce, which takes 2(N-1)/N x bytes / busbw (nccl-tests' bus
// bandwidth, what `porta-bench comm` measures). Without overlap the allreduce adds to the step; with
// it, it hides behind the backward pass (taken as 2/3 of the step) and only its excess shows.
#include <cstdint>
#include <string>
#include <vector>

namespace porta::bench {

struct Link {
  std::string name;
  double busbw_gbs = 0.0;
  std::int64_t ranks = 0;
  bool measured = false;  // a figure of this results file's `comm` rows, not an assumption
};

struct ScalingPrediction {
  double allreduce_s = 0.0;
  double efficiency = 0.0;             // step / (step + allreduce)
  double efficiency_overlapped = 0.0;  // step / (step + what the backward pass does not hide)
};

// The links the report assumes, with bandwidths the docs state: 8 GPUs on PCIe 4 and 5 x16 and on
// NVLink through NVSwitch, and 2 to 16 nodes of 8 GPUs joined by one 100 Gb/s NIC each.
std::vector<Link> assumed_links();

ScalingPrediction predict_scaling(double step_s, double gradient_bytes, const Link& link);

}  // namespace porta::bench
