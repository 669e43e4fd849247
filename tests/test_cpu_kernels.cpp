// The cpu backend's own kernels: its vectorisable activations (sigmoid, SiLU, tanh, erf, GELU) against the
// double-precision formulas of the ref oracle, over float's whole useful range and at its edges;
// its f16 runs in every instruction set against the scalar conversions; its GEMM micro-kernels against a double
// sum; its choice of micro-kernel for a convolution; and its choice of convolution algorithm
// (PORTA_CPU_CONV).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cpu/kernels/activation_run.hpp"
#include "backends/cpu/kernels/cache_sizes.hpp"
#include "backends/cpu/kernels/micro_kernel.hpp"
#include "backends/cpu/kernels/scratch_pool.hpp"
#include "backends/cpu/kernels/vector_kernels.hpp"
#include "core/runtime/fma_probe.hpp"
#include "core/runtime/op_math.hpp"
#include "op_cases/verify.hpp"
#include "test_util.hpp"

using namespace porta;
using namespace porta::detail;

// Rows a multiple of 4 KiB apart share one L1 set, 2 KiB apart two; 12 ways.
static_assert(rows_alias_in_l1(14, 1024) && !rows_alias_in_l1(12, 1024) && !rows_alias_in_l1(12, 3072));
static_assert(rows_alias_in_l1(28, 512) && rows_alias_in_l1(28, 1536) && !rows_alias_in_l1(14, 512));
static_assert(!rows_alias_in_l1(28, 256) && !rows_alias_in_l1(28, 1760) && !rows_alias_in_l1(28, 1));
// Cache sizes: sysfs believed at any size; sysconf's L3 capped (508 MiB on a Zen 5 guest without
// sysfs), its L1 and L2 not; nothing reported, the fallback.
static_assert(reported_cache_size(3, 64 << 20, 508 << 20, 8 << 20) == 64 << 20);
static_assert(reported_cache_size(3, 0, 508 << 20, 8 << 20) == 32 << 20);
static_assert(reported_cache_size(3, 0, 16 << 20, 8 << 20) == 16 << 20);
static_assert(reported_cache_size(2, 0, 2 << 20, 256 << 10) == 2 << 20);
static_assert(reported_cache_size(2, 0, -1, 256 << 10) == 256 << 10);
static_assert(reported_cache_size(3, 0, 0, 8 << 20) == 8 << 20);

// Every call's finish (accumulate or not, its epilogue's residual and clamp) picks the entry of
// tile_finishes that describes it.
constexpr float any_residual[1] = {};
static_assert([] {
  for (int i = 0; i < std::ssize(tile_finishes); ++i) {
    const TileFinish f = tile_finishes[i];
    const TileEpilogue e{.residual = f.residual ? any_residual : nullptr, .activation = f.activation};
    if (finish_index(f.accumulate, f.epilogue ? &e : nullptr) != i) return false;
  }
  return true;
}());

TEST_SUITE("runtime") {
  TEST_CASE("cpu sigmoid and SiLU: within 3 ulp of double precision, limits and NaN kept") {
    constexpr double ulp = 5.960464477539063e-8;  // 2^-24, float's relative spacing
    double worst_sigmoid = 0.0, worst_silu = 0.0, worst_exp = 0.0;
    for (double x = -100.0; x <= 100.0; x += 1.0 / 1024) {
      const auto xf = static_cast<float>(x);
      const double sigmoid_want = sigmoid(static_cast<double>(xf)), silu_want = silu(static_cast<double>(xf));
      if (sigmoid_want > 1e-37)  // normal floats; below, the clamp may leave a denormal in place of less
        worst_sigmoid = std::max(worst_sigmoid, std::fabs(sigmoid_fast(xf) - sigmoid_want) / sigmoid_want);
      if (std::fabs(silu_want) > 1e-36)
        worst_silu = std::max(worst_silu, std::fabs(silu_fast(xf) - silu_want) / std::fabs(silu_want));
      if (std::fabs(x) < 87.0)
        worst_exp = std::max(worst_exp, std::fabs(exp_clamped(xf) - std::exp(static_cast<double>(xf))) /
                                            std::exp(static_cast<double>(xf)));
    }
    MESSAGE("worst relative error, in ulp: exp " << worst_exp / ulp << ", sigmoid " << worst_sigmoid / ulp
                                                 << ", silu " << worst_silu / ulp);
    CHECK(worst_exp < 2 * ulp);
    CHECK(worst_sigmoid < 3 * ulp);
    CHECK(worst_silu < 4 * ulp);
    // The run this CPU's instruction set gets (PORTA_CPU_ISA caps it) is the same arithmetic.
    std::vector<float> xs;
    for (double x = -100.0; x <= 100.0; x += 1.0 / 64) xs.push_back(static_cast<float>(x));
    for (const Activation act : {Activation::Sigmoid, Activation::Silu}) {
      std::vector<float> ys = xs;
      activation_run(act)(ys.data(), static_cast<std::int64_t>(ys.size()));
      double worst = 0.0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const double want = activate(act, static_cast<double>(xs[i]));
        if (std::fabs(want) > 1e-36) worst = std::max(worst, std::fabs(ys[i] - want) / std::fabs(want));
      }
      CAPTURE(to_string(act));
      CHECK(worst < 4 * ulp);
    }
    constexpr float inf = std::numeric_limits<float>::infinity();
    CHECK(sigmoid_fast(inf) == 1.0f);
    CHECK(sigmoid_fast(-inf) >= 0.0f);
    CHECK(sigmoid_fast(-inf) < 1e-38f);
    CHECK(silu_fast(0.0f) == 0.0f);
    CHECK(std::isnan(sigmoid_fast(std::numeric_limits<float>::quiet_NaN())));
    CHECK(std::isnan(silu_fast(std::numeric_limits<float>::quiet_NaN())));
  }

  TEST_CASE("cpu tanh: within 3 ulp of double precision, on both sides of the series' end, limits and NaN kept") {
    constexpr double ulp = 5.960464477539063e-8;
    double worst_series = 0.0, worst_tail = 0.0;
    // Finely near 0 (where the series' relative error counts) and across the whole range.
    for (double x = -20.0; x <= 20.0; x += std::fabs(x) < 1.0 ? 1.0 / 65536 : 1.0 / 1024) {
      const auto xf = static_cast<float>(x);
      if (xf == 0.0f) continue;
      const double want = std::tanh(static_cast<double>(xf));
      double& worst = std::fabs(xf) < tanh_series_end ? worst_series : worst_tail;
      worst = std::max(worst, std::fabs(tanh_fast(xf) - want) / std::fabs(want));
    }
    MESSAGE("worst relative error, in ulp: series " << worst_series / ulp << ", tail " << worst_tail / ulp);
    CHECK(worst_series < 2 * ulp);
    CHECK(worst_tail < 3 * ulp);
    CHECK(tanh_fast(1e-30f) == 1e-30f);  // tiny arguments: tanh x = x
    // Each instruction set's run is the same arithmetic.
    std::vector<float> xs;
    for (double x = -30.0; x <= 30.0; x += 1.0 / 128) xs.push_back(static_cast<float>(x));
    for (const auto& [isa, kernels] : runnable_vector_kernels()) {
      std::vector<float> ys = xs;
      kernels.tanh(ys.data(), static_cast<std::int64_t>(ys.size()));
      double worst = 0.0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const double want = std::tanh(double{xs[i]});
        if (want != 0.0) worst = std::max(worst, std::fabs(ys[i] - want) / std::fabs(want));
      }
      CAPTURE(isa);
      CHECK(worst < 3 * ulp);
    }
    CHECK((activation_run(Activation::Tanh) == vector_kernels().tanh));
    constexpr float inf = std::numeric_limits<float>::infinity();
    CHECK(tanh_fast(inf) == 1.0f);
    CHECK(tanh_fast(-inf) == -1.0f);
    CHECK(std::signbit(tanh_fast(-0.0f)));
    CHECK(std::isnan(tanh_fast(std::numeric_limits<float>::quiet_NaN())));
  }

  TEST_CASE("cpu erf and GELU: within a few ulp of double precision, limits and NaN kept") {
    constexpr double ulp = 5.960464477539063e-8;
    // Both GELUs in forms without cancellation: 1 + erf(v) = erfc(-v), 1 + tanh(u) = 2 sigmoid(2u).
    const auto gelu_erf = +[](double x) { return 0.5 * x * std::erfc(-x / std::numbers::sqrt2); };
    const auto gelu_tanh = +[](double x) {
      return x * sigmoid(2 * std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x));
    };
    // erf and erf's GELU relative to the result; the tanh form relative to x, that is its gate's
    // error: u in float moves sigmoid(2u) by up to |2u| times u's few ulp, which no float form avoids.
    const auto relative = [](double, double want) { return std::fabs(want); };
    const auto to_x = [](double x, double) { return std::fabs(x); };
    const auto track = [](double& worst, float got, double want, double scale) {
      if (std::fabs(want) > 1e-36) worst = std::max(worst, std::fabs(got - want) / scale);
    };
    double worst_erf = 0.0, worst_gelu = 0.0, worst_gelu_tanh = 0.0;
    // Past +-14 erf is +-1 and GELU x or a denormal; the steps meet every region's edges closely.
    for (double x = -16.0; x <= 16.0; x += 1.0 / 4096) {
      const auto xf = static_cast<float>(x);
      const auto xd = static_cast<double>(xf);
      track(worst_erf, erf_fast(xf), std::erf(xd), std::fabs(std::erf(xd)));
      track(worst_gelu, gelu_fast(xf), gelu_erf(xd), std::fabs(gelu_erf(xd)));
      track(worst_gelu_tanh, gelu_tanh_fast(xf), gelu_tanh(xd), std::fabs(xd));
    }
    for (float x = 1e-30f; x < 1.0f; x *= 1.5f) {  // tiny arguments keep their relative precision
      const auto xd = static_cast<double>(x);
      track(worst_erf, erf_fast(x), std::erf(xd), std::erf(xd));
      track(worst_gelu, gelu_fast(-x), gelu_erf(-xd), std::fabs(gelu_erf(-xd)));
    }
    MESSAGE("worst error, in ulp: erf " << worst_erf / ulp << ", gelu " << worst_gelu / ulp
                                        << ", gelu tanh (relative to x) " << worst_gelu_tanh / ulp);
    CHECK(worst_erf < 3 * ulp);
    CHECK(worst_gelu < 7 * ulp);
    CHECK(worst_gelu_tanh < 4 * ulp);
    // Each instruction set's runs are the same arithmetic.
    std::vector<float> xs;
    for (double x = -16.0; x <= 16.0; x += 1.0 / 64) xs.push_back(static_cast<float>(x));
    for (const auto& [isa, kernels] : runnable_vector_kernels()) {
      for (const auto& [name, run, want, scale] :
           {std::tuple{"erf", kernels.erf, +[](double x) { return std::erf(x); }, +relative},
            std::tuple{"gelu", kernels.gelu, gelu_erf, +relative},
            std::tuple{"gelu tanh", kernels.gelu_tanh, gelu_tanh, +to_x}}) {
        std::vector<float> ys = xs;
        run(ys.data(), static_cast<std::int64_t>(ys.size()));
        double worst = 0.0;
        for (std::size_t i = 0; i < xs.size(); ++i) {
          const auto x = static_cast<double>(xs[i]);
          track(worst, ys[i], want(x), scale(x, want(x)));
        }
        CAPTURE(isa);
        CAPTURE(name);
        CHECK(worst < 7 * ulp);
      }
    }
    CHECK((activation_run(Activation::Gelu) == vector_kernels().gelu));
    constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(erf_fast(inf) == 1.0f);
    CHECK(erf_fast(-inf) == -1.0f);
    CHECK(erf_fast(0.0f) == 0.0f);
    CHECK(gelu_fast(inf) == inf);
    CHECK(gelu_fast(-inf) == 0.0f);
    CHECK(gelu_tanh_fast(inf) == inf);
    CHECK(gelu_tanh_fast(-inf) == 0.0f);
    CHECK(std::isnan(erf_fast(nan)));
    CHECK(std::isnan(gelu_fast(nan)));
    CHECK(std::isnan(gelu_tanh_fast(nan)));
  }

  TEST_CASE("cpu conv micro-kernel: the least computed, tails counted; on AVX-512 tiles of 7, a 16 panel, 1x1 6x64") {
    for (const std::int64_t filters : {1, 16, 17, 24, 40, 64, 80, 112, 144, 192, 240, 390, 2048})
      for (const std::int64_t rows : {1, 7, 49, 196, 3136}) {
        CAPTURE(filters);
        CAPTURE(rows);
        const MicroKernel& chosen = filter_micro_kernel_for(filters, rows, false);
        const MicroKernel& plain = gemm_micro_kernel_for(filters);
        CHECK(computed_by(chosen, filters, rows) <= computed_by(plain, filters, rows));
        CHECK(computed_by(chosen, filters, rows) >= filters * rows);
        CHECK(chosen.isa == plain.isa);
        CHECK(static_cast<bool>(chosen.run_rows_a));
        CHECK(static_cast<bool>(chosen.run_streamed_a));
      }
    for (const bool rows_alias : {false, true})
      for (const std::int64_t columns : {16, 32, 512})
        CHECK(static_cast<bool>(gemm_micro_kernel_for(columns, rows_alias).run_streamed_a));
    // A GEMM's kernel reads A by columns (packed, or transposed in place) and by rows.
    for (const bool rows_alias : {false, true})
      for (const std::int64_t columns : {16, 33, 40, 48, 49, 512}) {
        CHECK(static_cast<bool>(gemm_kernel_for(columns, false, rows_alias).run_columns_a));
        CHECK(static_cast<bool>(gemm_kernel_for(columns, true, rows_alias).run_columns_a));
        CHECK(static_cast<bool>(gemm_kernel_for(columns, true, rows_alias).run_streamed_a));
      }
    if (gemm_micro_kernel().isa == "avx512") {
      CHECK(computed_by(gemm_micro_kernel(), 112, 196) == 112 * 196);  // 3 panels of 32 and one of 16
      CHECK(computed_by(gemm_micro_kernel(), 40, 196) == 48 * 196);
      CHECK(gemm_kernel_for(40, true, false).nr == 48);
      CHECK(gemm_kernel_for(40, false, false).nr == 16);
      CHECK(gemm_kernel_for(49, true, false).nr == 32);
      CHECK(gemm_kernel_for(128, true, false, true).nr == 64);  // A's rows streamed: the 6x64
      CHECK(gemm_kernel_for(96, true, false, true).nr == 32);
      CHECK(filter_micro_kernel_for(2048, 49, false).mr == 7);
      CHECK(filter_micro_kernel_for(192, 49, false).mr == 7);
      CHECK(filter_micro_kernel_for(144, 3136, false).mr == 7);  // a tie, the wide kernel with a tail
      CHECK(filter_micro_kernel_for(96, 3136, false).mr == 7);  // a tie, neither with a tail: wider panels
      CHECK(filter_micro_kernel_for(80, 196, false).mr == 14);
      CHECK(filter_micro_kernel_for(64, 3136, false).mr == 14);
      // 1x1 layers of exactly 64 filters in one pass; more filters keep the panels of 32.
      CHECK(filter_micro_kernel_for(64, 3136, true).nr == 64);
      CHECK(filter_micro_kernel_for(64, 49, true).nr == 64);
      CHECK(filter_micro_kernel_for(256, 3136, true).nr == 32);
      CHECK(filter_micro_kernel_for(256, 3136, true, true).nr == 64);  // streamed: one pass per 64
      CHECK(filter_micro_kernel_for(96, 3136, true, true).nr != 64);
    }
  }

  TEST_CASE("cpu micro-kernels: every kernel this CPU runs, A by rows and columns, B packed and in place") {
    std::vector<MicroKernel> kernels = runnable_micro_kernels();
    // Each kernel's tail panel as a kernel of its own.
    for (std::size_t i = 0, n = kernels.size(); i < n; ++i)
      if (kernels[i].tail_nr > 0)
        kernels.push_back({.isa = kernels[i].isa, .mr = kernels[i].mr, .nr = kernels[i].tail_nr,
                           .run_columns_a = kernels[i].run_tail_columns_a, .run_rows_a = kernels[i].run_tail_rows_a,
                           .run_streamed_a = kernels[i].run_tail_rows_a});
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    const auto random = [&](std::size_t n) {
      std::vector<float> v(n);
      for (float& x : v) x = uniform(rng);
      return v;
    };
    constexpr std::int64_t depth = 19, tiles = 3, taps = 2, shift[taps] = {0, 2};
    for (const MicroKernel& kernel : kernels) {
      const std::int64_t mr = kernel.mr, nr = kernel.nr, rows = tiles * mr, ldc = nr + 3;
      // A's rows 23 floats apart, or its columns (steps of k) rows + 5 apart.
      const std::int64_t row_ld = 23, column_ld = rows + 5;
      const std::vector<float> a = random(static_cast<std::size_t>(
          std::max(rows * row_ld + depth, depth * column_ld + rows) + shift[taps - 1]));
      const AlignedFloats b = aligned_floats(static_cast<std::size_t>(taps * depth * nr));
      for (std::int64_t i = 0; i < taps * depth * nr; ++i) b[static_cast<std::size_t>(i)] = uniform(rng);
      const std::vector<float> bias = random(static_cast<std::size_t>(nr));
      const std::vector<float> residual = random(static_cast<std::size_t>(rows * ldc)), old = random(residual.size());
      const Taps both{shift, taps, depth * nr};
      for (const MicroKernelFn run : {kernel.run_rows_a, kernel.run_streamed_a, kernel.run_columns_a}) {
        const bool by_columns = run == kernel.run_columns_a;
        const std::int64_t lda = by_columns ? column_ld : row_ld;
        const auto a_at = [&](std::int64_t t, std::int64_t i, std::int64_t p) {
          return a[static_cast<std::size_t>(shift[t] + (by_columns ? p * lda + i : i * lda + p))];
        };
        // The elements of c that differ from the reference: a call over `count` tiles and `cols`
        // columns with finish f, c having been `old`.
        const auto wrong_elements = [&](const std::vector<float>& c, std::int64_t count, int cols,
                                        const TileFinish& f) {
          std::int64_t wrong = 0;
          for (std::int64_t i = 0; i < rows; ++i)
            for (std::int64_t j = 0; j < ldc; ++j) {
              const auto at = static_cast<std::size_t>(i * ldc + j);
              if (i >= count * mr || j >= cols) {  // outside the call's tiles and columns: untouched
                wrong += c[at] != old[at];
                continue;
              }
              double want = f.accumulate ? old[at] : 0.0;
              for (std::int64_t t = 0; t < taps; ++t)
                for (std::int64_t p = 0; p < depth; ++p)
                  want += double{a_at(t, i, p)} * b[static_cast<std::size_t>((t * depth + p) * nr + j)];
              if (f.epilogue)
                want = activate(f.activation,
                                want + bias[static_cast<std::size_t>(j)] + (f.residual ? residual[at] : 0.0));
              wrong += std::fabs(c[at] - want) > 1e-5 * (1.0 + std::fabs(want));
            }
          return wrong;
        };
        for (const std::int64_t count : {std::int64_t{1}, tiles})
          for (const int cols : {static_cast<int>(nr), static_cast<int>(nr) - 5, 1})
            for (const bool b_in_place : {false, true}) {
              // B packed, or the same values read in place at a row stride of nr + 3, in a buffer that
              // ends at the last step's `cols` columns (ASan: the loads stop there).
              const std::int64_t ldb = nr + 3;
              std::vector<float> plain(b_in_place ? static_cast<std::size_t>((taps * depth - 1) * ldb + cols) : 0);
              for (std::int64_t step = 0; b_in_place && step < taps * depth; ++step)
                std::copy_n(b.get() + step * nr, cols, plain.begin() + step * ldb);
              const Taps b_taps = b_in_place ? Taps{shift, taps, depth * ldb, ldb} : both;
              for (const TileFinish& f : tile_finishes) {
                const TileEpilogue epilogue{.bias = bias.data(), .residual = f.residual ? residual.data() : nullptr,
                                            .ld_residual = ldc, .activation = f.activation};
                std::vector<float> c = old;
                run({.depth = depth, .a = a.data(), .lda = lda, .taps = b_taps,
                     .b = b_in_place ? plain.data() : b.get(), .c = c.data(), .ldc = ldc, .tiles = count, .cols = cols,
                     .accumulate = f.accumulate, .epilogue = f.epilogue ? &epilogue : nullptr});
                CAPTURE(kernel.isa);
                CAPTURE(mr);
                CAPTURE(nr);
                CAPTURE(by_columns);
                CAPTURE(b_in_place);
                CAPTURE(count);
                CAPTURE(cols);
                CAPTURE(finish_index(f.accumulate, f.epilogue ? &epilogue : nullptr));
                CHECK(wrong_elements(c, count, cols, f) == 0);
              }
            }
      }
    }
  }

  TEST_CASE("cpu f16 runs: bit for bit the scalar conversions, in every instruction set this CPU has") {
    const auto sets = runnable_vector_kernels();
    // Every f16 (test_dtype checks the scalar conversions against exact values).
    std::vector<std::uint16_t> halves(1 << 16);
    for (std::size_t h = 0; h < halves.size(); ++h) halves[h] = static_cast<std::uint16_t>(h);
    // Every f16 as f32, the midpoints between neighbours and the floats either side of them, and
    // random bit patterns (NaNs, infinities and f32 subnormals among them).
    std::vector<float> floats;
    for (std::uint32_t h = 0; h < 0x7c00; ++h) {
      const float lo = f16_to_f32(static_cast<std::uint16_t>(h)), hi = f16_to_f32(static_cast<std::uint16_t>(h + 1));
      const float mid = lo + (hi - lo) / 2;
      for (const float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
        floats.push_back(v);
        floats.push_back(-v);
      }
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 1 << 18; ++i) floats.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
    for (const auto& [name, set] : sets) {
      CAPTURE(name);
      std::vector<float> widened(halves.size());
      set.widen_f16(halves.data(), widened.data(), static_cast<std::int64_t>(halves.size()));
      std::size_t widen_mismatches = 0, narrow_mismatches = 0;
      for (std::size_t i = 0; i < halves.size(); ++i)
        widen_mismatches += std::bit_cast<std::uint32_t>(widened[i]) != std::bit_cast<std::uint32_t>(f16_to_f32(halves[i]));
      std::vector<std::uint16_t> narrowed(floats.size());
      set.narrow_f16(floats.data(), narrowed.data(), static_cast<std::int64_t>(floats.size()));
      for (std::size_t i = 0; i < floats.size(); ++i) narrow_mismatches += narrowed[i] != f32_to_f16(floats[i]);
      CHECK(widen_mismatches == 0);
      CHECK(narrow_mismatches == 0);
    }
  }
}

namespace porta::test {

TEST_SUITE("runtime") {
  TEST_CASE("PORTA_CPU_CONV: every algorithm setting matches ref; an unknown one is a clear error at compile") {
    // A 3x3 stride-1 layer that the cpu device runs channels-last, large enough that the
    // heuristic picks Winograd, with a bias and an activation for the epilogue.
    Graph g;
    const Tensor x = g.input("x", {2, 40, 13, 11});
    const auto values = [](std::size_t n, std::uint64_t seed) { return cases::random_values(n, seed, -0.5f, 0.5f); };
    g.output("y", g.conv2d(x, g.constant("w", {48, 40, 3, 3}, values(48 * 40 * 9, 2)),
                           {.pad = {1, 1, 1, 1}, .activation = Activation::Relu}, g.constant("b", {48}, values(48, 3))));
    const auto run = [&](const Device& device) {
      Executable exe = device.compile(g);
      cases::set_random_inputs(exe, g, 1);
      exe.run();
      return exe.output("y");
    };
    const std::vector<float> want = run(Device::open("ref"));
    for (const char* setting : {"auto", "direct", "winograd", "measure"}) {
      const ScopedEnv env("PORTA_CPU_CONV", setting);
      CAPTURE(setting);
      for (const char* spec : {"cpu", "cpu:threads=1"}) {
        CAPTURE(spec);
        const cases::Comparison c = cases::compare(run(Device::open(spec)), want);
        CHECK(c.nmse < cases::nmse_threshold(OpKind::Conv2d, DType::f32));
      }
    }
    const ScopedEnv env("PORTA_CPU_CONV", "fastest");
    check_error([&] { (void)Device::open("cpu").compile(g); }, ErrorCode::InvalidArgument,
                {"PORTA_CPU_CONV=fastest", "auto, direct, winograd or measure"});
  }
}

}  // namespace porta::test

// In the "ops" suite, so that each PORTA_CPU_ISA-capped ctest run checks the device it tests.
TEST_SUITE("ops") {
  TEST_CASE("cpu FMA probe: its chains compute what they count, in every instruction set this CPU has") {
    for (const auto& [name, set] : runnable_vector_kernels()) {
      CAPTURE(name);
      const int lanes = name == "avx512" ? 16 : name == "avx2" ? 8 : 4;
      CHECK(set.multiply_adds_per_step >= 8 * lanes);  // fewer vectors cannot cover two FMA units' latency
      // Chain i starts at i, and each step moves it visibly (fma_probe.hpp), so a loop that ran
      // fewer steps, or fewer chains, gives another sum.
      for (const std::int64_t steps : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{100}}) {
        CAPTURE(steps);
        const double want = fma_chains_sum(set.multiply_adds_per_step, steps);
        CHECK(set.multiply_add_chains(steps, fma_scale, fma_shift) == doctest::Approx(want).epsilon(1e-5));
      }
    }
  }

  TEST_CASE("cpu FMA probe: a positive rate on every thread count; ref has none") {
    for (const char* spec : {"cpu:threads=1", "cpu:threads=2"}) {
      CAPTURE(spec);
      const double gflops = Device::open(spec).measure_fma_gflops();
      CHECK(std::isfinite(gflops));
      CHECK(gflops > 0.0);
    }
    test::check_error([] { Device::open("ref").measure_fma_gflops(); }, ErrorCode::Unsupported,
                      {"'ref'", "no FMA probe"});
  }

  TEST_CASE("cpu device: its arch and lanes are the kernels', and it names the CPU's set where that is wider") {
    const Device cpu = Device::open("cpu");
    const DeviceInfo& info = cpu.info();
    const std::string_view isa = gemm_micro_kernel().isa;
    CHECK(info.subgroup_size == (isa == "avx512" ? 16 : isa == "avx2" ? 8 : 4));
#if defined(__x86_64__)
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const std::string_view widest = __builtin_cpu_supports("avx512f") ? "avx512" : avx2 ? "avx2" : "generic";
    const auto label = [](std::string_view set) {
      return std::string(set == "avx512" ? "AVX-512" : set == "avx2" ? "AVX2" : "baseline");
    };
    std::string expected = widest == "generic" ? "x86-64" : "x86-64 " + label(widest);
    if (isa != widest) expected += ", " + label(isa) + " kernels";
    CHECK(info.arch == expected);
#endif
  }
}
