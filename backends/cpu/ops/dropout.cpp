// Dropout on the cpu: the mask of backends/common/philox.h in parallel chunks, each Philox block
// drawn once for its four draws (DropoutCursor).
#include <variant>

#include "backends/common/philox.h"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/dropout.hpp"

namespace porta::detail {

void cpu_dropout(const HostOpArgs& args) {
  const DropoutMask m = dropout_mask(std::get<DropoutParams>(args.node.params), args.output.shape());
  const HostTensor &x = args.inputs[0], &y = args.output;
  const philox_u32 step = dropout_step(args.inputs[1].load(0));
  parallel_chunks(y.numel(), chunk_elements, [&](std::int64_t begin, std::int64_t count) {
    ChunkBuffer x_buffer, y_buffer;
    const float* xv = read_f32(x, begin, count, x_buffer.data());
    float* yv = write_f32(y, begin, y_buffer.data());
    DropoutCursor c;
    dropout_start(&c, m.seed, step, m.threshold, m.span, m.offset, static_cast<philox_u64>(begin));
    for (std::int64_t i = 0; i < count; ++i) {
      if (i > 0) dropout_advance(&c);
      yv[i] = dropout_cursor_keeps(&c) != 0 ? xv[i] * m.scale : 0.0f;
    }
    store_f32(y, begin, count, yv);
  });
}

}  // namespace porta::detail
