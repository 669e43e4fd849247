// Injected faults (core/runtime/fault_injection.hpp) and absent or exhausted devices. A sweep makes
// the 1st, 2nd, ... occurrence of one kind of operation fail during a whole compile and run of a
// small CNN, until a compile and run no longer reaches the Nth. Each failure must be a porta::Error
// of the expected code, and the same device must then give the right answer. Leaks are
// LeakSanitizer's to find: scripts/test runs this suite in the ASan build too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

#include "core/runtime/fault_injection.hpp"
#include "small_cnn.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

namespace fault = detail::fault;
using fault::Site;
using E = ErrorCode;

struct Armed {
  Armed(Site site, long nth) { fault::arm(site, nth); }
  ~Armed() { fault::disarm(); }
};

// The devices to sweep: cpu always, the first OpenCL device where there is one.
std::vector<std::string> fault_devices() {
  std::vector<std::string> specs{"cpu"};
  for (const BackendStatus& b : backends())
    if (b.name == "opencl" && !b.devices.empty()) specs.push_back("opencl:0");
  return specs;
}

// Sweeps the Nth occurrence of `site`; returns how many faults were injected. `absorbed` says
// whether a fault may be recovered from without an error (a bad cache file is rebuilt).
int sweep(const std::string& spec, Site site, std::initializer_list<E> codes, bool absorbed = false) {
  const Graph graph = small_cnn(11);
  const std::vector<std::byte> expected = compile_and_run(Device::open(spec), graph);
  for (long n = 1;; ++n) {
    CAPTURE(n);
    const Device device = Device::open(spec);  // fresh, so its program cache starts empty
    std::vector<std::byte> result;
    std::string error;
    bool fired = false;
    {
      const Armed armed(site, n);
      try {
        result = compile_and_run(device, graph);
      } catch (const Error& e) {
        error = e.what();
        CHECK_MESSAGE(std::find(codes.begin(), codes.end(), e.code()) != codes.end(),
                      "unexpected " << std::string(to_string(e.code())) << ": " << error);
      }
      fired = fault::fired();
    }
    if (!fired) {  // the sweep went past the last occurrence: a clean run
      CHECK(error.empty());
      CHECK(result == expected);
      return static_cast<int>(n - 1);
    }
    if (error.empty()) {
      CHECK_MESSAGE(absorbed, "a fault was injected but nothing failed");
      CHECK(result == expected);
    }
    CHECK(compile_and_run(device, graph) == expected);  // the device is still usable
  }
}

}  // namespace

TEST_SUITE("faults") {
  TEST_CASE("the fault hook fires once, at the chosen occurrence") {
    CHECK_FALSE(fault::should_fail(Site::HostAllocation));  // unarmed
    {
      const Armed armed(Site::HostAllocation, 3);
      CHECK_FALSE(fault::should_fail(Site::DeviceAllocation));  // another site does not count
      CHECK_FALSE(fault::should_fail(Site::HostAllocation));
      CHECK_FALSE(fault::should_fail(Site::HostAllocation));
      CHECK_FALSE(fault::fired());
      CHECK(fault::should_fail(Site::HostAllocation));
      CHECK(fault::fired());
      CHECK_FALSE(fault::should_fail(Site::HostAllocation));
    }
    CHECK_FALSE(fault::should_fail(Site::HostAllocation));
  }

  TEST_CASE("every failed host or device allocation is OutOfMemory, and the device stays usable") {
    for (const std::string& spec : fault_devices()) {
      CAPTURE(spec);
      const int host = sweep(spec, Site::HostAllocation, {E::OutOfMemory});
      const int device = sweep(spec, Site::DeviceAllocation, {E::OutOfMemory});
      MESSAGE(spec << ": " << host << " host and " << device << " device allocation faults injected");
      CHECK(host + device >= 2);  // at least the arena and the constants
    }
  }

  TEST_CASE("every failed OpenCL program build is BuildFailed; a failed cache read rebuilds") {
    const auto statuses = backends();
    if (std::none_of(statuses.begin(), statuses.end(), [](const BackendStatus& b) { return b.name == "opencl"; })) {
      MESSAGE("not applicable: this build has no opencl backend");
      return;
    }
    if (fault_devices().size() < 2) {
      skip_device("no OpenCL device");
      return;
    }
    // A build from a cached binary that fails is rebuilt from source; one from source is an error.
    const int builds = sweep("opencl:0", Site::ProgramBuild, {E::BuildFailed}, true);
    const int reads = sweep("opencl:0", Site::FileRead, {}, true);
    MESSAGE("opencl:0: " << builds << " program build and " << reads << " cache read faults injected");
    CHECK(builds >= 1);
    if (std::getenv("PORTA_CACHE_DIR") != nullptr) CHECK(reads >= 1);
  }

  TEST_CASE("absent devices: an index past the last one, a backend without driver or not built") {
    for (const std::string spec : {"opencl:99", "cuda:0", "hip:0", "cuda:7", "opencl:2147483647"}) {
      CAPTURE(spec);
      const std::string backend = spec.substr(0, spec.find(':'));
      const auto statuses = backends();
      const auto it = std::find_if(statuses.begin(), statuses.end(), [&](const BackendStatus& b) { return b.name == backend; });
      const int index = std::stoi(spec.substr(spec.find(':') + 1));
      E code = E::NotFound;  // not in this build, or no device with that index
      if (it != statuses.end() && it->devices.empty()) code = E::DeviceUnavailable;
      if (it != statuses.end() && index < static_cast<int>(it->devices.size())) continue;  // it exists here
      check_error([&] { Device::open(spec); }, code, {spec});
    }
  }

  TEST_CASE("a graph larger than the device's memory is OutOfMemory at compile time") {
    for (const std::string& spec : fault_devices()) {
      CAPTURE(spec);
      const Device device = Device::open(spec);
      Graph huge;
      huge.output("y", huge.relu(huge.input("x", {std::int64_t{1} << 42})));  // 16 TiB
      check_error([&] { device.compile(huge); }, E::OutOfMemory, {"bytes", "allocat"});
      const Graph graph = small_cnn(3);
      CHECK(compile_and_run(device, graph) == compile_and_run(Device::open(spec), graph));
    }
  }
}

}  // namespace porta::test
