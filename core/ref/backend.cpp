// The reference device: naive kernels with f64 accumulation, the oracle of every test.
#include "core/ref/kernels.hpp"
#include "core/runtime/host_backend.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

DeviceInfo ref_info() {
  DeviceInfo info;
  info.spec = "ref";
  info.backend = "ref";
  info.name = "reference (naive, single thread, f64 accumulation)";
  info.vendor = "porta";
  info.arch = "host";
  info.compute_units = 1;
  info.threads = 1;
  info.memory_total = host_memory_total();
  info.memory_free = host_memory_available();
  return info;
}

class RefBackend final : public Backend {
 public:
  std::string_view name() const override { return "ref"; }
  BackendStatus status() override { return {"ref", {ref_info()}, {}}; }
  std::shared_ptr<DeviceImpl> open(const DeviceSpec& spec) override {
    if (spec.index != 0 || !spec.options.empty())
      throw Error(ErrorCode::InvalidArgument, "device '" + spec.text + "': the reference device takes no index or options");
    return std::make_shared<HostDevice>(ref_info(), ref_kernels());
  }
};

}  // namespace

std::unique_ptr<Backend> make_ref_backend() { return std::make_unique<RefBackend>(); }

}  // namespace porta::detail
