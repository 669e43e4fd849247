#pragma once
// The environment a result was measured in, recorded with every result file.
#include <string>
#include <vector>

#include "porta/device.hpp"
#include "results.hpp"

namespace porta::bench {

Json device_json(const DeviceInfo& info);

// Devices, backends compiled in (and why one has no device), porta version, compiler, build type
// and flags, git revision, UTC date, hostname, hardware threads and the command line.
Json environment(const std::vector<DeviceInfo>& devices, const std::string& command_line);

std::string hostname();
std::string utc_timestamp_iso();   // "2026-11-30T12:34:56Z"
std::string utc_timestamp_path();  // "20261130T123456Z": safe as a folder name everywhere

}  // namespace porta::bench
