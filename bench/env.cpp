#include "env.hpp"

#include <chrono>
#include <ctime>
#include <thread>

#include <fmt/core.h>
#include <unistd.h>

#include "timing.hpp"

// Written at every build by bench/git_revision.cmake, the rest filled in by bench/CMakeLists.txt
// at configure time; the fallbacks keep a bare compile working.
#if __has_include("git_revision.hpp")
#include "git_revision.hpp"
#else
#define PORTA_GIT_REVISION "unknown"
#endif
#ifndef PORTA_VERSION
#define PORTA_VERSION "unknown"
#endif
#ifndef PORTA_BUILD_TYPE
#define PORTA_BUILD_TYPE "unknown"
#endif
#ifndef PORTA_CXX_FLAGS
#define PORTA_CXX_FLAGS ""
#endif

namespace porta::bench {
namespace {

std::string compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown";
#endif
}

std::string utc_format(const char* format) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[64] = {};
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

}  // namespace

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string utc_timestamp_iso() { return utc_format("%Y-%m-%dT%H:%M:%SZ"); }
std::string utc_timestamp_path() { return utc_format("%Y%m%dT%H%M%SZ"); }

Json device_json(const DeviceInfo& info) {
  return Json{{"spec", info.spec},
              {"backend", info.backend},
              {"name", info.name},
              {"vendor", info.vendor},
              {"arch", info.arch},
              {"driver", info.driver},
              {"compute_units", info.compute_units},
              {"threads", info.threads},
              {"subgroup_size", info.subgroup_size},
              {"memory_total", info.memory_total},
              {"memory_free", info.memory_free},
              {"fp16", info.fp16},
              {"bf16", info.bf16},
              {"matrix_units", info.matrix_units},
              {"tf32", info.tf32},
              {"cache_bytes", Json{{"l1", info.cache_l1}, {"l2", info.cache_l2}, {"l3", info.cache_l3}}}};
}

Json environment(const std::vector<DeviceInfo>& devices, const std::string& command_line) {
  Json env;
  env["porta_version"] = PORTA_VERSION;
  env["git_revision"] = PORTA_GIT_REVISION;
  env["compiler"] = compiler();
  env["build_type"] = PORTA_BUILD_TYPE;
  env["cxx_flags"] = PORTA_CXX_FLAGS;
  env["date"] = utc_timestamp_iso();
  env["hostname"] = hostname();
  env["threads"] = std::thread::hardware_concurrency();
  env["command"] = command_line;
  env["timer"] = "per row: device-event (the backend's device timestamps, Executable::last_run_time) where the "
                 "device gives them, else host (steady_clock around Executable::run())";
  env["sampling"] = fmt::format("the impls of one problem on one device in turns of about {:g} ms, each opening "
                                "with {:g} ms of untimed runs (one after another where their data together would "
                                "not fit the device's memory; OpenBLAS on its own on more than one thread)",
                                round_s * 1e3, settle_s * 1e3);
  env["backends"] = Json::array();
  for (const BackendStatus& backend : backends()) {
    Json b{{"name", backend.name}, {"devices", backend.devices.size()}};
    if (!backend.reason.empty()) b["reason"] = backend.reason;
    env["backends"].push_back(std::move(b));
  }
  env["devices"] = Json::array();
  for (const DeviceInfo& info : devices) env["devices"].push_back(device_json(info));
  return env;
}

}  // namespace porta::bench
