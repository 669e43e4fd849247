// Attention blocked flash-style: a task per query block of one (batch, head) walks the key blocks,
// keeping the block's scores, its running softmax and its output in cache, so the whole score
// matrix is never formed. The scores are taken transposed (k rows against the block's qᵀ, packed
// once per task), masked, folded into the running softmax and summed over v's rows
// (attention_tile.hpp). k is read in place, and so is v when its width is whole panels. The key
// blocks are walked in order by one task, so results do not depend on the thread count.
#include <algorithm>
#include <limits>
#include <optional>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/kernels/vector_kernels.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"

namespace porta::detail {
namespace {

constexpr std::int64_t panel = attention_panel_columns;  // queries per task, keys per block
constexpr float hidden = -std::numeric_limits<float>::infinity();

struct Operands {
  const AttentionDims& d;
  const float *q, *k, *v, *mask;  // mask null when the node has none
  float* y;
  std::int64_t width_panels;      // panels across v's width
  bool v_in_place;                // v's width is whole panels: its rows are read where they are
};

// One task's buffers: qᵀ [depth, panel], the transposed scores [panel keys, panel queries], the
// output [panel, width_panels * panel], v's rows padded to whole panels where needed, and each query's
// running max, sum and rescale factor.
struct Scratch {
  std::vector<float> qt, scores, out, v, max, sum, rescale;
  Scratch(const AttentionDims& d, std::int64_t width_panels, bool v_in_place)
      : qt(d.depth * panel), scores(panel * panel), out(panel * width_panels * panel),
        v(v_in_place ? 0 : panel * width_panels * panel), max(panel), sum(panel), rescale(panel) {}
};

// qᵀ of rows [i0, i0 + rows) scaled; columns past `rows` are 0. The scores' lanes past `rows` hold
// that product's zeros or, past the strips the block computes, an earlier block's weights: finite,
// and never read into y.
void pack_queries(const Operands& o, std::int64_t bh, std::int64_t i0, std::int64_t rows, Scratch& s) {
  const AttentionDims& d = o.d;
  std::fill(s.qt.begin(), s.qt.end(), 0.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* q = o.q + (bh * d.queries + i0 + r) * d.depth;
    for (std::int64_t c = 0; c < d.depth; ++c) s.qt[c * panel + r] = q[c] * d.scale;
  }
}

// Adds the mask to the scores of keys [j0, j0 + keys) against queries [i0, i0 + rows) and hides the
// keys a causal query does not see.
void mask_scores(const Operands& o, std::int64_t bh, std::int64_t i0, std::int64_t rows, std::int64_t j0,
                 std::int64_t keys, float* scores) {
  const AttentionDims& d = o.d;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (o.mask) {
      const float* m = o.mask + d.mask_row(bh, i0 + r) + j0 * d.mask_stride[3];
      for (std::int64_t j = 0; j < keys; ++j) scores[j * panel + r] += m[j * d.mask_stride[3]];
    }
    for (std::int64_t j = std::max<std::int64_t>(d.visible_keys(i0 + r) - j0, 0); j < keys; ++j)
      scores[j * panel + r] = hidden;
  }
}

// v's rows [j0, j0 + keys) of problem bh as a [keys, width_panels * panel] operand.
const float* v_rows(const Operands& o, std::int64_t bh, std::int64_t j0, std::int64_t keys, Scratch& s) {
  const AttentionDims& d = o.d;
  const float* v = o.v + (bh * d.keys + j0) * d.width;
  if (o.v_in_place) return v;
  const std::int64_t ldv = o.width_panels * panel;  // the columns past the width stay the buffer's zeros
  for (std::int64_t j = 0; j < keys; ++j) std::copy_n(v + j * d.width, d.width, s.v.begin() + j * ldv);
  return s.v.data();
}

void query_block_task(const Operands& o, const VectorKernels& vk, std::int64_t bh, std::int64_t i0, Scratch& s) {
  const AttentionDims& d = o.d;
  const std::int64_t rows = std::min(panel, d.queries - i0), ldo = o.width_panels * panel;
  pack_queries(o, bh, i0, rows, s);
  std::fill(s.out.begin(), s.out.end(), 0.0f);
  std::fill(s.max.begin(), s.max.end(), hidden);
  std::fill(s.sum.begin(), s.sum.end(), 0.0f);
  const std::int64_t seen = d.visible_keys(i0 + rows - 1);  // the keys any query of the block sees
  for (std::int64_t j0 = 0; j0 < seen; j0 += panel) {
    const std::int64_t keys = std::min(panel, d.keys - j0);
    vk.attention_panel(d.depth, o.k + (bh * d.keys + j0) * d.depth, d.depth, 1, keys, rows, s.qt.data(), panel,
                       s.scores.data(), panel, false);
    mask_scores(o, bh, i0, rows, j0, keys, s.scores.data());
    vk.attention_softmax(s.scores.data(), keys, s.max.data(), s.sum.data(), s.rescale.data());
    for (std::int64_t r = 0; r < rows; ++r)
      if (s.rescale[r] != 1.0f)
        for (std::int64_t c = 0; c < ldo; ++c) s.out[r * ldo + c] *= s.rescale[r];
    const float* v = v_rows(o, bh, j0, keys, s);
    const std::int64_t ldv = o.v_in_place ? d.width : ldo;
    for (std::int64_t w = 0; w < o.width_panels; ++w)
      vk.attention_panel(keys, s.scores.data(), 1, panel, rows, std::min(panel, d.width - w * panel), v + w * panel,
                         ldv, s.out.data() + w * panel, ldo, true);
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    float* y = o.y + (bh * d.queries + i0 + r) * d.width;
    for (std::int64_t c = 0; c < d.width; ++c) y[c] = s.out[r * ldo + c] / s.sum[r];
  }
}

}  // namespace

void cpu_attention(const HostOpArgs& args) {
  const bool has_mask = args.inputs.size() > 3;
  const AttentionDims d = attention_dims(std::get<AttentionParams>(args.node.params), args.inputs[0].shape(),
                                         args.inputs[2].shape(), has_mask ? &args.inputs[3].shape() : nullptr);
  if (args.output.numel() == 0) return;
  const F32Input q(args.inputs[0]), k(args.inputs[1]), v(args.inputs[2]);
  std::optional<F32Input> mask;
  if (has_mask) mask.emplace(args.inputs[3]);
  const F32Output y(args.output);
  const Operands o{d,        q.data(), k.data(), v.data(), mask ? mask->data() : nullptr, y.data(),
                   ceil_div(d.width, panel), d.width % panel == 0};
  const VectorKernels& vk = vector_kernels();
  const std::int64_t blocks = ceil_div(d.queries, panel);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, d.problems() * blocks),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      Scratch scratch(d, o.width_panels, o.v_in_place);
                      for (std::int64_t t = range.begin(); t != range.end(); ++t)
                        query_block_task(o, vk, t / blocks, t % blocks * panel, scratch);
                    });
  y.commit(0, args.output.numel());
}

}  // namespace porta::detail
