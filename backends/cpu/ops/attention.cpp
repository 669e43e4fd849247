// Attention blocked flash-style: a task per query block of one (batch, head) walks the key blocks,
// keeping the block's scores, its running softmax and its output in cache, so the whole score
// matrix is never formed. Per key block it packs kᵀ and v into panels, takes the scores, adds the
// mask, and folds them into the running softmax (attention_tile.hpp). The key blocks are walked in
// order by one task, so results do not depend on the thread count.
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

constexpr std::int64_t panel = attention_panel_columns;
constexpr std::int64_t query_block = 64;  // rows per task: scores, output and panels stay within L2
constexpr float hidden = -std::numeric_limits<float>::infinity();

struct Operands {
  const AttentionDims& d;
  const float *q, *k, *v, *mask;  // mask null when the node has none
  float* y;
  std::int64_t width_panels;      // panels across v's width
};

// One task's buffers, each a multiple of whole panels.
struct Scratch {
  std::vector<float> q, kt, v, scores, out, max, sum, rescale;
  Scratch(const AttentionDims& d, std::int64_t width_panels)
      : q(query_block * d.depth), kt(d.depth * panel), v(panel * width_panels * panel),
        scores(query_block * panel), out(query_block * width_panels * panel), max(query_block),
        sum(query_block), rescale(query_block) {}
};

// Keys [j0, j0 + keys) of problem bh: kᵀ as [depth, panel] and v as [panel, width_panels * panel],
// both zero past their ends so that whole panels can be multiplied.
void pack_keys(const Operands& o, std::int64_t bh, std::int64_t j0, std::int64_t keys, Scratch& s) {
  const AttentionDims& d = o.d;
  const std::int64_t ldv = o.width_panels * panel;
  std::fill(s.kt.begin(), s.kt.end(), 0.0f);
  std::fill(s.v.begin(), s.v.end(), 0.0f);
  for (std::int64_t j = 0; j < keys; ++j) {
    const float* k = o.k + (bh * d.keys + j0 + j) * d.depth;
    for (std::int64_t c = 0; c < d.depth; ++c) s.kt[c * panel + j] = k[c];
    std::copy_n(o.v + (bh * d.keys + j0 + j) * d.width, d.width, s.v.begin() + j * ldv);
  }
}

// Adds the mask to rows [i0, i0 + rows) of the scores against keys [j0, j0 + keys) and hides the
// keys a causal query does not see.
void mask_scores(const Operands& o, std::int64_t bh, std::int64_t i0, std::int64_t rows, std::int64_t j0,
                 std::int64_t keys, float* scores) {
  const AttentionDims& d = o.d;
  for (std::int64_t r = 0; r < rows; ++r) {
    float* s = scores + r * panel;
    if (o.mask) {
      const float* m = o.mask + d.mask_row(bh, i0 + r) + j0 * d.mask_stride[3];
      for (std::int64_t j = 0; j < keys; ++j) s[j] += m[j * d.mask_stride[3]];
    }
    for (std::int64_t j = std::max<std::int64_t>(d.visible_keys(i0 + r) - j0, 0); j < keys; ++j) s[j] = hidden;
  }
}

void query_block_task(const Operands& o, const VectorKernels& vk, std::int64_t bh, std::int64_t i0, Scratch& s) {
  const AttentionDims& d = o.d;
  const std::int64_t rows = std::min(query_block, d.queries - i0), ldo = o.width_panels * panel;
  for (std::int64_t i = 0; i < rows * d.depth; ++i) s.q[i] = o.q[(bh * d.queries + i0) * d.depth + i] * d.scale;
  std::fill(s.out.begin(), s.out.end(), 0.0f);
  std::fill(s.max.begin(), s.max.end(), hidden);
  std::fill(s.sum.begin(), s.sum.end(), 0.0f);
  const std::int64_t seen = d.visible_keys(i0 + rows - 1);  // the keys any row of the block sees
  for (std::int64_t j0 = 0; j0 < seen; j0 += panel) {
    const std::int64_t keys = std::min(panel, d.keys - j0);
    pack_keys(o, bh, j0, keys, s);
    vk.attention_panel(d.depth, s.q.data(), d.depth, rows, s.kt.data(), panel, s.scores.data(), panel, false);
    mask_scores(o, bh, i0, rows, j0, keys, s.scores.data());
    vk.attention_softmax(s.scores.data(), rows, keys, s.max.data(), s.sum.data(), s.rescale.data());
    for (std::int64_t r = 0; r < rows; ++r)
      if (s.rescale[r] != 1.0f)
        for (std::int64_t c = 0; c < ldo; ++c) s.out[r * ldo + c] *= s.rescale[r];
    for (std::int64_t w = 0; w < o.width_panels; ++w)
      vk.attention_panel(keys, s.scores.data(), panel, rows, s.v.data() + w * panel, ldo, s.out.data() + w * panel,
                         ldo, true);
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
  const Operands o{d, q.data(), k.data(), v.data(), mask ? mask->data() : nullptr, y.data(), ceil_div(d.width, panel)};
  const VectorKernels& vk = vector_kernels();
  const std::int64_t blocks = ceil_div(d.queries, query_block);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, d.problems() * blocks),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      Scratch scratch(d, o.width_panels);
                      for (std::int64_t t = range.begin(); t != range.end(); ++t)
                        query_block_task(o, vk, t / blocks, t % blocks * query_block, scratch);
                    });
  y.commit(0, args.output.numel());
}

}  // namespace porta::detail
