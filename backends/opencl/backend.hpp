#pragma once
// The OpenCL backend's devices, for what needs more than the registry gives: the GEMM tuner
// opens one device many times, each with other GEMM tiles.
#include <memory>
#include <optional>

#include "backends/opencl/gemm_tiles.hpp"
#include "core/runtime/backend.hpp"

namespace porta::detail {

// The device "opencl:<index>" or "opencl:name=<text>" names; throws NotFound, DeviceUnavailable
// or InvalidArgument.
ClDeviceDescription find_opencl_device(const DeviceSpec& spec);

// `tiles` replaces the GEMM tiles the device would choose for itself.
std::shared_ptr<DeviceImpl> make_opencl_device(ClDeviceDescription description,
                                               std::optional<GemmTiles> tiles = std::nullopt);

// porta-bench tune on the device `spec` names (backends/opencl/gemm_tuning.cpp).
TuneReport tune_opencl_gemm(const DeviceSpec& spec, const TuneSettings& settings);

}  // namespace porta::detail
