// Dropout's reference kernel: the mask of backends/common/philox.h, drawn element by element.
#include <variant>

#include "backends/common/philox.h"
#include "core/ref/kernels.hpp"
#include "core/runtime/dropout.hpp"

namespace porta::detail {

void ref_dropout(const HostOpArgs& args) {
  const DropoutMask m = dropout_mask(std::get<DropoutParams>(args.node.params), args.output.shape());
  const HostTensor& x = args.inputs[0];
  const philox_u32 step = dropout_step(args.inputs[1].load(0));
  for (std::int64_t i = 0; i < args.output.numel(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    // The f32 product is exact in double, so this rounds as every device's float product does.
    const bool keep = dropout_keeps(m.seed, step, m.offset + static_cast<philox_u64>(i) / m.span, m.threshold) != 0;
    args.output.store(at, keep ? static_cast<float>(double{x.load(at)} * double{m.scale}) : 0.0f);
  }
}

}  // namespace porta::detail
