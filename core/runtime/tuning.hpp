#pragma once
// Kernel parameters chosen by measurement (porta-bench tune). A backend with tunable kernels
// measures candidates on one device, stores the fastest where its later compiles find them, and
// reports every trial.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace porta::detail {

struct TuneTrial {
  std::string parameters;  // the backend's own notation, e.g. "vector vw=16 nv=2 mr=12 ..."
  double median_s = 0.0;
  double gflops = 0.0;
  std::string error;  // why the candidate failed (build error, wrong result); empty when it ran
};

struct TuneSettings {
  std::int64_t m = 1024, n = 1024, k = 1024;  // the f32 GEMM timed
  double min_time_s = 0.3;                     // per candidate, after one untimed run
  std::function<void(const TuneTrial&)> progress;  // called after each trial
};

struct TuneReport {
  std::string device;      // the device's name
  std::string previous;    // the parameters in use before tuning
  std::vector<TuneTrial> trials;
  std::size_t best = 0;    // index into trials
  std::string stored_at;   // the file later processes read
};

// Throws Unsupported when the spec's backend has nothing to tune, and what Device::open throws
// for a bad spec.
TuneReport tune_device(std::string_view spec, const TuneSettings& settings);

}  // namespace porta::detail
