// Conv2d on NCHW activations (NHWC: conv2d_nhwc.cpp), with the algorithm chosen per layer:
// depthwise convolutions have too little reuse for a GEMM and get a direct vectorised kernel;
// every other one is a direct convolution run by the GEMM micro-kernel, Y[K, pixels] =
// W[K, C*R*S] x X, whose B operand is never packed or expanded (no im2col): it is the input
// itself, read at one shift per filter tap. Layers whose taps land mostly in the padding (absurd
// padding, stride or dilation) run a plain direct loop.
#include <algorithm>
#include <optional>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "backends/cpu/kernels/cache_sizes.hpp"
#include "backends/cpu/kernels/epilogue.hpp"
#include "backends/cpu/kernels/micro_kernel.hpp"
#include "backends/cpu/kernels/scratch_pool.hpp"
#include "backends/cpu/kernels/vector_kernels.hpp"
#include "backends/cpu/ops/conv2d_nhwc.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Output elements [y_index, y_index + count), one run of pixels of one filter, from the sums in
// src (which may be y itself): + bias + residual, then the activation.
void finish_run(const ConvOperands& op, std::int64_t y_index, const float* src, std::int64_t count, float bias) {
  bias_activate(op.y.data() + y_index, src, op.residual ? op.residual + y_index : nullptr, count, bias,
                op.p.activation);
  op.y.commit(y_index, count);
}

// Where the shifted GEMM reads its B operand. Output pixel (n, oh, ow) of a pass is column
// J = n * plane + oh * wph + ow, and filter tap (c, r, s) reads source[shift[(c * R + r) * S + s] + J]
// for it. Columns with ow >= Q are computed and discarded: they let every tap be one shift.
//  - In place, for 1x1 stride-1 unpadded layers: the source is one image of the input (wph = Q).
//  - Otherwise a copy of the input, zero-padded and split into the stride's phases (only those
//    some tap reads), laid out [channel][phase][image][row][column] so that a tap's rows follow
//    each other and images follow each other. Small images go into one copy together, to fill
//    the micro-kernel's columns; large ones are copied and convolved one at a time, so that the
//    copy is still in cache when it is read.
struct ShiftedSource {
  bool in_place = false;
  std::int64_t images = 1;               // per pass (and per copy): N for small images, else 1
  std::int64_t hph = 0, wph = 0, plane = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> phases;  // per slot: (row phase, column phase)
  std::int64_t slots = 1;
  std::int64_t channel_stride = 0;       // between channels of the source
  std::int64_t columns = 0;              // per pass, up to the last pixel kept
  std::vector<std::int64_t> shift;       // per tap, from the group's first channel
};

ShiftedSource shifted_source(const ConvDims& d, const Conv2dParams& p, std::int64_t nr) {
  const auto [sh, sw] = p.stride;
  const auto [dh, dw] = p.dilation;
  ShiftedSource src;
  const bool pointwise = d.r == 1 && d.s == 1 && sh == 1 && sw == 1 &&
                         std::ranges::all_of(p.pad, [](std::int64_t v) { return v == 0; });
  // In place reads nothing twice, but one small image fills few micro-kernel columns.
  const std::int64_t pixels = d.p * d.q;
  src.in_place = pointwise && (d.n == 1 || pixels * 10 >= ceil_div(pixels, nr) * nr * 9);
  src.hph = d.p + (d.r - 1) * dh / sh;
  src.wph = d.q + (d.s - 1) * dw / sw;
  src.plane = src.hph * src.wph;
  src.images = src.in_place || src.plane >= 16 * nr ? 1 : d.n;
  std::vector<int> phase_slot(static_cast<std::size_t>(sh * sw), -1);  // row phase * sw + column phase
  for (std::int64_t r = 0; r < d.r; ++r)
    for (std::int64_t s = 0; s < d.s; ++s) {
      int& slot = phase_slot[static_cast<std::size_t>(r * dh % sh * sw + s * dw % sw)];
      if (slot < 0) slot = static_cast<int>(src.phases.size()), src.phases.emplace_back(r * dh % sh, s * dw % sw);
    }
  src.slots = static_cast<std::int64_t>(src.phases.size());
  src.channel_stride = src.slots * src.images * src.plane;
  src.columns = (src.images - 1) * src.plane + (d.p - 1) * src.wph + d.q;
  for (std::int64_t c = 0; c < d.c_per_group; ++c)
    for (std::int64_t r = 0; r < d.r; ++r)
      for (std::int64_t s = 0; s < d.s; ++s) {
        const int slot = phase_slot[static_cast<std::size_t>(r * dh % sh * sw + s * dw % sw)];
        src.shift.push_back((c * src.slots + slot) * src.images * src.plane + r * dh / sh * src.wph + s * dw / sw);
      }
  return src;
}

// One plane of the copy described by `src`: element (hh, ww) of phase slot `slot` is element
// (hh * sh + py - pad_top, ww * sw + px - pad_left) of the input plane, or 0 in the padding.
void copy_plane(const ConvOperands& op, const ShiftedSource& src, std::int64_t slot, const float* x_plane, float* out) {
  const ConvDims& d = op.d;
  const auto [sh, sw] = op.p.stride;
  const auto [py, px] = src.phases[static_cast<std::size_t>(slot)];
  // Columns [first, last) of a row read inside the input; the rest is padding.
  const std::int64_t offset = px - op.p.pad[1];
  const std::int64_t first = std::min(src.wph, offset >= 0 ? 0 : ceil_div(-offset, sw));
  const std::int64_t last = std::clamp(d.w - offset <= 0 ? 0 : ceil_div(d.w - offset, sw), first, src.wph);
  for (std::int64_t hh = 0; hh < src.hph; ++hh, out += src.wph) {
    const std::int64_t h = hh * sh + py - op.p.pad[0];
    if (h < 0 || h >= d.h) {
      std::fill_n(out, src.wph, 0.0f);
      continue;
    }
    const float* x_row = x_plane + h * d.w + offset;
    std::fill(out, out + first, 0.0f);
    std::fill(out + last, out + src.wph, 0.0f);
    for (std::int64_t ww = first; ww < last; ++ww) out[ww] = x_row[ww * sw];
  }
}

// The copy of images [first_image, first_image + src.images), laid out
// [channel][slot][image][plane].
void copy_source(const ConvOperands& op, const ShiftedSource& src, std::int64_t first_image, float* dst) {
  const ConvDims& d = op.d;
  tbb::parallel_for(std::int64_t{0}, d.c * src.slots * src.images, [&](std::int64_t task) {
    const std::int64_t c = task / (src.slots * src.images), slot = task / src.images % src.slots;
    const std::int64_t n = first_image + task % src.images;
    copy_plane(op, src, slot, op.x + (n * d.c + c) * d.h * d.w, dst + task * src.plane);
  });
}

// Filters packed as the micro-kernel's A panels: per group, panels of mr filters, each
// [tap][mr], zero-padded past the group's last filter.
std::int64_t packed_filters_size(const ConvDims& d, std::int64_t mr) {
  return d.groups * ceil_div(d.k_per_group, mr) * mr * d.c_per_group * d.r * d.s;
}

void pack_filters(const float* w, const ConvDims& d, std::int64_t mr, float* dst) {
  const std::int64_t depth = d.c_per_group * d.r * d.s, panels = ceil_div(d.k_per_group, mr);
  tbb::parallel_for(std::int64_t{0}, d.groups * panels, [&](std::int64_t task) {
    const std::int64_t group = task / panels, row0 = task % panels * mr;
    const std::int64_t rows = std::min(mr, d.k_per_group - row0);
    const float* filter = w + (group * d.k_per_group + row0) * depth;
    float* panel = dst + task * depth * mr;
    for (std::int64_t i = 0; i < mr; ++i, filter += depth) {
      for (std::int64_t t = 0; t < depth; ++t) panel[t * mr + i] = i < rows ? filter[t] : 0.0f;
    }
  });
}

// Constant filters, packed once when the graph is prepared (for the micro-kernel chosen once per
// process).
struct PackedFilters final : HostNodeState {
  std::vector<float> panels;
};

// How the GEMM of each pass and group is cut into tasks: blocks of filter panels by blocks of
// micro-kernel column tiles. Few tasks per thread on a busy machine would leave cores waiting.
struct ConvTasks {
  std::int64_t panels_per_block = 0, panel_blocks = 0;
  std::int64_t tiles_per_block = 0, tile_blocks = 0;
  std::int64_t count = 0;
};

ConvTasks conv_tasks(std::int64_t passes, std::int64_t panels, std::int64_t tiles, std::int64_t max_panels) {
  const int threads = tbb::this_task_arena::max_concurrency();
  const std::int64_t wanted = threads > 1 ? 4 * std::int64_t{threads} : 1;
  ConvTasks t{.panels_per_block = std::min(panels, max_panels), .tiles_per_block = std::min<std::int64_t>(tiles, 8)};
  const auto count = [&] {
    t.panel_blocks = ceil_div(panels, t.panels_per_block);
    t.tile_blocks = ceil_div(tiles, t.tiles_per_block);
    return t.count = passes * t.panel_blocks * t.tile_blocks;
  };
  while (count() < wanted && t.tiles_per_block > 1) t.tiles_per_block = ceil_div(t.tiles_per_block, 2);
  while (count() < wanted && t.panels_per_block > 1) t.panels_per_block = ceil_div(t.panels_per_block, 2);
  return t;
}

// Every non-depthwise convolution: per pass (one image in place, else all of them) and group,
// C[Kg, columns] = A[Kg, Cg*R*S] x B with B read from the shifted source, in depth slices so that
// a task's filter block stays in L2 while the input rows that a column tile reads stay in L1.
void conv_shifted(const ConvOperands& op, const PackedFilters* prepared) {
  const ConvDims& d = op.d;
  const MicroKernel& kernel = gemm_micro_kernel();
  const std::int64_t mr = kernel.mr, nr = kernel.nr;
  const ShiftedSource src = shifted_source(d, op.p, nr);
  const std::int64_t depth = d.c_per_group * d.r * d.s;
  const std::int64_t panels = ceil_div(d.k_per_group, mr);

  const bool packed = prepared != nullptr;
  const auto packing = gemm_scratch().acquire(static_cast<std::size_t>(packed ? 1 : packed_filters_size(d, mr)));
  if (!packed) pack_filters(op.w, d, mr, packing.data());
  const float* filters = packed ? prepared->panels.data() : packing.data();
  const auto copy = gemm_scratch().acquire(static_cast<std::size_t>(src.in_place ? 1 : d.c * src.channel_stride));

  const CacheSizes& cache = host_cache_sizes();
  const std::int64_t bytes = sizeof(float);
  const std::int64_t kc = l1_depth_slice(nr);
  const std::int64_t max_panels = std::max<std::int64_t>(1, cache.l2 / 4 / (kc * mr * bytes));
  const std::int64_t passes = (src.in_place ? d.n : 1) * d.groups;
  const ConvTasks tasks = conv_tasks(passes, panels, ceil_div(src.columns, nr), max_panels);
  const std::int64_t out_plane = d.p * d.q;

  // In place, every image runs in one parallel loop; a copy holds `src.images` images at a time.
  for (std::int64_t first_image = 0; first_image < (src.in_place ? 1 : d.n); first_image += src.images) {
    if (!src.in_place) copy_source(op, src, first_image, copy.data());
    const auto task_range = tbb::blocked_range<std::int64_t>(0, tasks.count, 1);
    tbb::parallel_for(task_range, [&](const tbb::blocked_range<std::int64_t>& range) {
      for (std::int64_t task = range.begin(); task != range.end(); ++task) {
        const std::int64_t pass = task / (tasks.panel_blocks * tasks.tile_blocks);
        const std::int64_t panel0 = task / tasks.tile_blocks % tasks.panel_blocks * tasks.panels_per_block;
        const std::int64_t col0 = task % tasks.tile_blocks * tasks.tiles_per_block * nr;
        const std::int64_t image = src.in_place ? pass / d.groups : 0, group = pass % d.groups;
        const std::int64_t row0 = panel0 * mr, rows = std::min(tasks.panels_per_block * mr, d.k_per_group - row0);
        const std::int64_t cols = std::min(tasks.tiles_per_block * nr, src.columns - col0);
        const std::int64_t first_filter = group * d.k_per_group + row0;
        const float* b = src.in_place ? op.x + (image * d.c + group * d.c_per_group) * out_plane
                                      : copy.data() + group * d.c_per_group * src.channel_stride;
        b += col0;
        // In place, C is the output itself; otherwise a block of padded columns, kept per task.
        const std::int64_t ldc = src.in_place ? out_plane : tasks.tiles_per_block * nr;
        const auto block = gemm_scratch().acquire(static_cast<std::size_t>(src.in_place ? 1 : rows * ldc));
        float* const c = src.in_place ? op.y.data() + (image * d.k + first_filter) * out_plane + col0 : block.data();
        const float* a_block = filters + (group * panels + panel0) * depth * mr;
        for (std::int64_t pc = 0; pc < depth; pc += kc) {
          const std::int64_t slice = std::min(kc, depth - pc);
          for (std::int64_t j = 0; j < cols; j += nr) {
            for (std::int64_t i = 0; i < rows; i += mr) {
              kernel.run_shifted_b(slice, a_block + i * depth + pc * mr, b + j, src.shift.data() + pc,
                                   c + i * ldc + j, ldc, static_cast<int>(std::min(mr, rows - i)),
                                   static_cast<int>(std::min(nr, cols - j)), pc > 0);
            }
          }
        }
        for (std::int64_t i = 0; i < rows; ++i) {
          const std::int64_t k = first_filter + i;
          const float bias = op.bias_of(k);
          const float* c_row = c + i * ldc;
          if (src.in_place) {
            finish_run(op, (image * d.k + k) * out_plane + col0, c_row, cols, bias);
            continue;
          }
          // Padded columns back to output pixels, one output row segment at a time.
          for (std::int64_t j = 0; j < cols;) {
            const std::int64_t column = col0 + j;
            const std::int64_t n = first_image + column / src.plane;
            const std::int64_t oh = column % src.plane / src.wph, ow = column % src.wph;
            const std::int64_t run = std::min(src.wph - ow, cols - j);
            if (oh < d.p && ow < d.q)
              finish_run(op, ((n * d.k + k) * d.p + oh) * d.q + ow, c_row + j, std::min(run, d.q - ow), bias);
            j += run;
          }
        }
      }
    }, tbb::simple_partitioner());
  }
}

// groups == C == K: output plane (n, k) reads only input plane (n, k) and filter k. Each task
// copies its input plane, zero-padded, into a buffer whose rows are `width` long, a multiple of
// the column stride sw: input (oh * sh + r * dh, ow * sw + s * dw) is then element
// sw * (oh * row + ow) + r * dh * width + s * dw with row = sh * width / sw, so one vectorised
// sweep covers a chunk of output rows laid end to end (columns ow >= Q are computed and dropped),
// and the chunk's sums stay in L1 until the epilogue stores them.
void depthwise(const ConvOperands& op) {
  const ConvDims& d = op.d;
  // Plain variables: the lambdas below capture them, which structured bindings do not allow in
  // clang 15.
  const std::int64_t sh = op.p.stride[0], sw = op.p.stride[1], dh = op.p.dilation[0], dw = op.p.dilation[1];
  const std::int64_t pad_top = op.p.pad[0], pad_left = op.p.pad[1];
  const std::int64_t height = (d.p - 1) * sh + (d.r - 1) * dh + 1;
  const std::int64_t width = ceil_div((d.q - 1) * sw + (d.s - 1) * dw + 1, sw) * sw;
  const std::int64_t row = sh * width / sw;
  std::vector<std::int64_t> row_shift;
  for (std::int64_t r = 0; r < d.r; ++r) row_shift.push_back(r * dh * width);
  // The input rows and columns that land inside the copy; the rest of it is padding.
  const std::int64_t h0 = std::max<std::int64_t>(0, -pad_top), h1 = std::min(d.h, height - pad_top);
  const std::int64_t w0 = std::max<std::int64_t>(0, -pad_left), w1 = std::min(d.w, width - pad_left);
  const DepthwisePlaneFn sweep = vector_kernels().depthwise_plane;
  const std::int64_t chunk_rows = std::clamp<std::int64_t>(2048 / row, 1, d.p);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, d.n * d.k), [&](const tbb::blocked_range<std::int64_t>& range) {
    // The padding is the same for every plane: zeroed once, then only the inside is copied.
    std::vector<float> copy(static_cast<std::size_t>(height * width), 0.0f);
    std::vector<float> columns(static_cast<std::size_t>(chunk_rows * row));
    for (std::int64_t plane = range.begin(); plane != range.end(); ++plane) {
      const std::int64_t k = plane % d.k;
      const float* x = op.x + plane * d.h * d.w;
      for (std::int64_t h = h0; h < h1; ++h)
        std::copy(x + h * d.w + w0, x + h * d.w + w1, copy.data() + (h + pad_top) * width + w0 + pad_left);
      for (std::int64_t oh0 = 0; oh0 < d.p; oh0 += chunk_rows) {
        const std::int64_t oh1 = std::min(d.p, oh0 + chunk_rows);
        sweep(op.w + k * d.r * d.s, d.r, d.s, row_shift.data(), copy.data() + sw * oh0 * row, sw, dw, columns.data(),
              (oh1 - 1 - oh0) * row + d.q);
        for (std::int64_t oh = oh0; oh < oh1; ++oh)
          finish_run(op, (plane * d.p + oh) * d.q, columns.data() + (oh - oh0) * row, d.q, op.bias_of(k));
      }
    }
  });
}

// Whether the input window that a layer's taps span (huge padding, stride or dilation) is far
// larger than the image and than an im2col of it: every fast path copies that window, zero-padded.
// The NHWC kernel's last tile of a row reads whole strides past the last output column.
bool sparse_window(const ConvDims& d, const Conv2dParams& p) {
  const auto span = [](std::int64_t outputs, std::int64_t stride, std::int64_t taps, std::int64_t dilation) {
    return static_cast<double>(outputs - 1) * static_cast<double>(stride) +
           static_cast<double>(taps - 1) * static_cast<double>(dilation) + 1.0;
  };
  const std::int64_t tile = p.layout == Layout::NHWC ? cpu_conv2d_nhwc_row_tile(d, p) : 1;
  const std::int64_t columns = ceil_div(d.q, tile) * tile;
  const double window = span(d.p, p.stride[0], d.r, p.dilation[0]) * span(columns, p.stride[1], d.s, p.dilation[1]);
  const auto pixels = [](auto... sizes) { return (static_cast<double>(sizes) * ...); };
  return window > 4 * pixels(d.h, d.w) + 2 * pixels(d.p, d.q, d.r, d.s) + 4096;
}

// Any geometry, one output element at a time, in either layout: for the sparse windows above,
// where nearly every tap lands in the padding.
void conv_direct(const ConvOperands& op) {
  const ConvDims& d = op.d;
  const ActivationIndex x_at = d.x_index(), y_at = d.y_index();
  tbb::parallel_for(std::int64_t{0}, d.n * d.k, [&](std::int64_t task) {
    const std::int64_t n = task / d.k, k = task % d.k, c0 = k / d.k_per_group * d.c_per_group;
    const float* filter = op.w + k * d.c_per_group * d.r * d.s;
    for (std::int64_t oh = 0; oh < d.p; ++oh)
      for (std::int64_t ow = 0; ow < d.q; ++ow) {
        float sum = 0.0f;
        for (std::int64_t r = 0; r < d.r; ++r) {
          const std::int64_t h = oh * op.p.stride[0] - op.p.pad[0] + r * op.p.dilation[0];
          if (h < 0 || h >= d.h) continue;
          for (std::int64_t s = 0; s < d.s; ++s) {
            const std::int64_t w = ow * op.p.stride[1] - op.p.pad[1] + s * op.p.dilation[1];
            if (w < 0 || w >= d.w) continue;
            for (std::int64_t c = 0; c < d.c_per_group; ++c)
              sum += op.x[x_at(n, c0 + c, h, w)] * filter[(c * d.r + r) * d.s + s];
          }
        }
        const std::int64_t y_index = y_at(n, k, oh, ow);
        finish_run(op, y_index, &sum, 1, op.bias_of(k));
      }
  });
}

}  // namespace

void cpu_conv2d(const HostOpArgs& args) {
  const auto& p = std::get<Conv2dParams>(args.node.params);
  const ConvDims d = conv_dims(args.inputs[0].shape(), args.inputs[1].shape(), p);
  if (args.output.numel() == 0) return;
  const F32Input x(args.inputs[0]);
  std::optional<F32Input> w;  // not needed once the filters are packed
  if (args.state == nullptr) w.emplace(args.inputs[1]);
  const ConvSlots slots = conv_slots(args.node);
  std::optional<F32Input> bias, residual;
  if (slots.bias >= 0) bias.emplace(args.inputs[slots.bias]);
  if (slots.residual >= 0) residual.emplace(args.inputs[slots.residual]);
  const F32Output y(args.output);
  const ConvOperands op{.d = d, .p = p, .x = x.data(), .w = w ? w->data() : nullptr,
                        .bias = bias ? bias->data() : nullptr, .residual = residual ? residual->data() : nullptr,
                        .y = y};
  if (sparse_window(d, p)) return conv_direct(op);
  if (p.layout == Layout::NHWC) return cpu_conv2d_nhwc(op, args.state);
  if (d.groups == d.c && d.groups == d.k) {
    depthwise(op);
  } else {
    conv_shifted(op, dynamic_cast<const PackedFilters*>(args.state));
  }
}

// Constant filters, packed once for either layout's kernel (NCHW depthwise reads them as they are).
std::shared_ptr<const HostNodeState> cpu_prepare_conv2d(const Graph& graph, const Node& node) {
  const auto& p = std::get<Conv2dParams>(node.params);
  const TensorInfo& w = graph.tensors()[static_cast<std::size_t>(node.inputs[1].id)];
  const ConvDims d = conv_dims(graph.shape(node.inputs[0]), w.desc.shape, p);
  const bool depthwise = d.groups == d.c && d.groups == d.k;
  if ((depthwise && p.layout == Layout::NCHW) || sparse_window(d, p) || w.role != Role::Constant || !w.data)
    return nullptr;
  std::vector<float> values(static_cast<std::size_t>(w.desc.numel()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = load_as_f32(w.data->data(), i, w.desc.dtype);
  if (p.layout == Layout::NHWC) return cpu_prepare_conv2d_nhwc(d, p, values.data());
  auto packed = std::make_shared<PackedFilters>();
  const std::int64_t mr = gemm_micro_kernel().mr;
  packed->panels.resize(static_cast<std::size_t>(packed_filters_size(d, mr)));
  pack_filters(values.data(), d, mr, packed->panels.data());
  return packed;
}

}  // namespace porta::detail
