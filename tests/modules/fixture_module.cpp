// Backend modules for test_modules.cpp: one source, built once per FIXTURE_* variant, each a module
// that is good or broken in one way. The loader must refuse each broken one with its own reason.
#include <stdexcept>

#include "core/runtime/backend.hpp"
#include "core/runtime/module_abi.hpp"

namespace {

using porta::detail::Backend;

class FixtureBackend final : public Backend {
 public:
  std::string_view name() const override { return "fixture"; }
  porta::BackendStatus status() override { return {"fixture", {}, "the fixture backend has no devices"}; }
  std::shared_ptr<porta::detail::DeviceImpl> open(const porta::detail::DeviceSpec& spec) override {
    throw porta::Error(porta::ErrorCode::NotFound, "device '" + spec.text + "': the fixture backend has none");
  }
};

void* create(char*, std::size_t) {
#ifdef FIXTURE_CREATE_THROWS
  throw std::runtime_error("the fixture's create throws");
#else
  return new FixtureBackend;
#endif
}

}  // namespace

#ifndef FIXTURE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) const porta::detail::PortaModuleInfo* porta_backend_module() {
  static const porta::detail::PortaModuleInfo info{
#ifdef FIXTURE_WRONG_MAGIC
      .magic = 0x12345678,
#else
      .magic = porta::detail::module_magic,
#endif
      .struct_size = sizeof(porta::detail::PortaModuleInfo),
      .abi_version = porta::detail::module_abi_version,
#ifdef FIXTURE_WRONG_NAME
      .name = "cpu",
#else
      .name = "fixture",
#endif
#ifdef FIXTURE_WRONG_BUILD_ID
      .build_id = "porta 0.0.0; contract 0000000000000000; another compiler",
#else
      .build_id = porta::detail::build_id,
#endif
      .score = [](char*, std::size_t) { return 1; },
      .create = create,
      .destroy = [](void* backend) { delete static_cast<Backend*>(backend); },
  };
  return &info;
}
#endif
