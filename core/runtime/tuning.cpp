#include "core/runtime/tuning.hpp"

#include "core/runtime/backend.hpp"
#include "porta/error.hpp"

namespace porta::detail {

#ifdef PORTA_HAVE_OPENCL
TuneReport tune_opencl_gemm(const DeviceSpec& spec, const TuneSettings& settings);  // backends/opencl/gemm_tuning.cpp
#endif

TuneReport tune_device(std::string_view text, [[maybe_unused]] const TuneSettings& settings) {
  const DeviceSpec spec = parse_device_spec(text);
#ifdef PORTA_HAVE_OPENCL
  if (spec.backend == "opencl") return tune_opencl_gemm(spec, settings);
#endif
  throw Error(ErrorCode::Unsupported, "device '" + spec.text + "': only opencl devices (of a build with -DBACKEND=opencl) "
                                      "have kernel parameters to tune; the " + spec.backend + " backend chooses its own");
}

}  // namespace porta::detail
