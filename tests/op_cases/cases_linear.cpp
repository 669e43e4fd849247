// MatMul, Gemm and Conv2d cases: sizes that are not multiples of any tile (1, 3, 17, 127, 129),
// every transpose, broadcast batch dims, vector operands, strided views and every conv parameter.
#include <string>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {
namespace {

std::string dims(std::int64_t m, std::int64_t k, std::int64_t n) {
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
}

// A stored as [M, K] (or [K, M] transposed), B as [K, N] (or [N, K]).
Shape a_shape(std::int64_t m, std::int64_t k, bool trans) { return trans ? Shape{k, m} : Shape{m, k}; }
Shape b_shape(std::int64_t k, std::int64_t n, bool trans) { return trans ? Shape{n, k} : Shape{k, n}; }

}  // namespace

void add_matmul_cases(std::vector<OpCase>& list, DType t) {
  struct Mnk {
    std::int64_t m, k, n;
  };
  // 31x17x16: AVX-512's 28x16 kernel and a last panel of 3 rows on its 4-row kernel; 150x77x45
  // its 7x48 kernel, a last panel of 3 rows and 45 columns. The last sizes cross the cpu GEMM's
  // cache blocks (96 rows, 256 columns, depth 256) with ragged edges.
  for (const Mnk s : {Mnk{1, 1, 1}, Mnk{3, 17, 1}, Mnk{1, 129, 3}, Mnk{17, 3, 129}, Mnk{31, 17, 16},
                      Mnk{127, 33, 129}, Mnk{129, 127, 17}, Mnk{150, 77, 45}, Mnk{200, 300, 260}})
    add_case(list, OpKind::MatMul, "plain_" + dims(s.m, s.k, s.n), t,
             [s](CaseGraph& c) { return c.g.matmul(c.input({s.m, s.k}), c.input({s.k, s.n})); });
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      if (!ta && !tb) continue;
      const std::string variant = std::string(ta && tb ? "trans_ab_" : ta ? "trans_a_" : "trans_b_");
      for (const Mnk s : {Mnk{3, 1, 5}, Mnk{17, 127, 3}, Mnk{129, 17, 127}, Mnk{97, 259, 257}})
        add_case(list, OpKind::MatMul, variant + dims(s.m, s.k, s.n), t, [s, ta, tb](CaseGraph& c) {
          return c.g.matmul(c.input(a_shape(s.m, s.k, ta)), c.input(b_shape(s.k, s.n, tb)),
                            {.trans_a = ta, .trans_b = tb});
        });
    }
  // Broadcast batch dims, numpy style.
  add_case(list, OpKind::MatMul, "batch_broadcast_3x1_4", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({3, 1, 5, 17}), c.input({4, 17, 3})); });
  add_case(list, OpKind::MatMul, "batch_a_only", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({2, 7, 9}), c.input({9, 4})); });
  add_case(list, OpKind::MatMul, "batch_b_only_1x3", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({1, 6, 5}), c.input({3, 5, 2})); });
  add_case(list, OpKind::MatMul, "batch_trans_ab", t, [](CaseGraph& c) {
    return c.g.matmul(c.input({2, 1, 17, 5}), c.input({3, 7, 17}), {.trans_a = true, .trans_b = true});
  });
  // Attention on [B, H, S, D]: scores Q Kt, then P V; keys shared by every head (grouped queries),
  // and K already stored as [B, H, D, S], which needs no transpose.
  add_case(list, OpKind::MatMul, "attention_q_kt_2x3x13x8", t, [](CaseGraph& c) {
    return c.g.matmul(c.input({2, 3, 13, 8}), c.input({2, 3, 13, 8}), {.trans_b = true});
  });
  add_case(list, OpKind::MatMul, "attention_p_v_2x3x13x8", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({2, 3, 13, 13}), c.input({2, 3, 13, 8})); });
  add_case(list, OpKind::MatMul, "attention_shared_keys_2x3x13x8", t, [](CaseGraph& c) {
    return c.g.matmul(c.input({2, 3, 13, 8}), c.input({2, 1, 13, 8}), {.trans_b = true});
  });
  add_case(list, OpKind::MatMul, "attention_k_stored_transposed", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({2, 3, 13, 8}), c.input({2, 3, 8, 13})); });
  // Vector operands: numpy promotes them to [1, K] or [K, 1] and drops that dim again.
  add_case(list, OpKind::MatMul, "vec_mat", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({17}), c.input({17, 5})); });
  add_case(list, OpKind::MatMul, "mat_vec", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({5, 17}), c.input({17})); });
  add_case(list, OpKind::MatMul, "vec_vec", t, [](CaseGraph& c) { return c.g.matmul(c.input({129}), c.input({129})); });
  add_case(list, OpKind::MatMul, "batch_mat_vec", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({2, 3, 17}), c.input({17})); });
  add_case(list, OpKind::MatMul, "vec_batch_mat", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({17}), c.input({2, 17, 3})); });
  add_case(list, OpKind::MatMul, "trans_b_vec", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({17}), c.input({5, 17}), {.trans_b = true}); });
  add_case(list, OpKind::MatMul, "const_weights", t,
           [](CaseGraph& c) { return c.g.matmul(c.input({9, 33}), c.weights({33, 17})); });
  // Strided views at the boundary: A as a transposed view of a [K, M] buffer, B as a row slice.
  add_case(list, OpKind::MatMul, "strided_views", t, [](CaseGraph& c) {
    return c.g.matmul(c.input({17, 9}, {1, 17}), c.input({9, 5}, {8, 1}));
  });
}

void add_gemm_cases(std::vector<OpCase>& list, DType t) {
  add_case(list, OpKind::Gemm, "no_c_1x1x1", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({1, 1}), c.input({1, 1})); });
  add_case(list, OpKind::Gemm, "no_c_127x17x129", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({127, 17}), c.weights({17, 129})); });
  add_case(list, OpKind::Gemm, "alpha_beta_bias", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({17, 33}), c.weights({33, 9}), {.alpha = 0.5f, .beta = 2.0f}, c.weights({9}));
  });
  add_case(list, OpKind::Gemm, "c_full", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({5, 3}), c.input({3, 7}), {.alpha = -1.5f, .beta = 0.25f}, c.input({5, 7}));
  });
  add_case(list, OpKind::Gemm, "c_column", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({9, 17}), c.weights({17, 3}), {}, c.weights({9, 1})); });
  add_case(list, OpKind::Gemm, "c_row_2d", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({9, 17}), c.weights({17, 3}), {}, c.weights({1, 3})); });
  add_case(list, OpKind::Gemm, "c_scalar", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({3, 5}), c.weights({5, 129}), {.beta = 3.0f}, c.weights({1})); });
  add_case(list, OpKind::Gemm, "beta_zero", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({3, 5}), c.weights({5, 4}), {.beta = 0.0f}, c.weights({4})); });
  add_case(list, OpKind::Gemm, "m1_trans_b_relu", t, [](CaseGraph& c) {  // one row, dot products with a tail
    return c.g.gemm(c.input({1, 67}), c.weights({40, 67}), {.trans_b = true, .activation = Activation::Relu},
                    c.weights({40}));
  });
  add_case(list, OpKind::Gemm, "m1_bias", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({1, 129}), c.weights({129, 17}), {}, c.weights({17})); });
  // One row with work for several threads (1.06M multiply-adds): B transposed (dot products) and
  // plain (B's rows scaled and summed), column chunks with ragged ends, depths with tails.
  add_case(list, OpKind::Gemm, "m1_wide_trans_b", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({1, 1001}), c.weights({1063, 1001}), {.trans_b = true}, c.weights({1063}));
  });
  // The cases below that name a path of the cpu backend's GEMM give B at run time: a constant B is
  // packed ahead there (the b_constant cases at the end).
  // A few rows beside a transposed B (a classifier at a small batch): dot products by the cpu
  // backend, a last block of 3 rows, a ragged last chunk of columns, a depth tail.
  add_case(list, OpKind::Gemm, "few_rows_trans_b_7x1001x1063", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({7, 1001}), c.weights({1063, 1001}), {.trans_b = true, .activation = Activation::Relu},
                    c.weights({1063}));
  });
  // More rows beside a transposed B of more than half of L2: on the cpu backend the transposed
  // product C^T = B A^T, whose 41 columns end within a panel, transposed into C before the bias
  // and relu; then with A transposed too.
  add_case(list, OpKind::Gemm, "transposed_product_41x390x700", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({41, 390}), c.input({700, 390}), {.trans_b = true, .activation = Activation::Relu},
                    c.weights({700}));
  });
  add_case(list, OpKind::Gemm, "transposed_product_trans_ab_33x300x601", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({300, 33}), c.input({601, 300}), {.trans_a = true, .trans_b = true}, c.weights({601}));
  });
  // Columns in two chunks of the transposed product (2050 each).
  add_case(list, OpKind::Gemm, "transposed_product_chunks_17x40x4100", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({17, 40}), c.input({4100, 40}), {.trans_b = true, .activation = Activation::Relu},
                    c.weights({4100}));
  });
  add_case(list, OpKind::Gemm, "m1_wide", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({1, 1001}), c.weights({1001, 1063}), {}, c.weights({1063})); });
  // Panels packed whole by the cpu backend's vector packers: a plain A beside more than 512
  // columns (rows transposed in registers), a transposed A beside at most 16 (runs dealt to the
  // 28-row kernel's panels) where it exceeds half of L3 (the tests' 64 KiB: 150x9x70), else read
  // in place by columns.
  add_case(list, OpKind::Gemm, "packed_a_45x33x600", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({45, 33}), c.input({33, 600}), {}, c.weights({600})); });
  add_case(list, OpKind::Gemm, "trans_a_narrow_61x40x9", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({40, 61}), c.input({40, 9}), {.trans_a = true}, c.weights({9}));
  });
  add_case(list, OpKind::Gemm, "trans_a_narrow_150x70x9", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({70, 150}), c.input({70, 9}), {.trans_a = true}, c.weights({9}));
  });
  // At most 8 columns: dot products along k on the cpu backend. 70 rows (groups of 4 and 2 more),
  // 35 deep (two steps of 16 and a tail), 8 columns (two groups of 4); then B transposed, 5
  // columns, and enough work (5.1M multiply-adds) for several threads.
  add_case(list, OpKind::Gemm, "few_cols_70x8x35", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({70, 35}), c.weights({35, 8}), {}, c.weights({8})); });
  add_case(list, OpKind::Gemm, "few_cols_trans_b_relu", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({1031, 997}), c.weights({5, 997}), {.trans_b = true, .activation = Activation::Relu},
                    c.weights({5}));
  });
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      if (!ta && !tb) continue;
      const std::string variant = std::string(ta && tb ? "trans_ab" : ta ? "trans_a" : "trans_b");
      add_case(list, OpKind::Gemm, variant + "_bias", t, [ta, tb](CaseGraph& c) {
        return c.g.gemm(c.input(a_shape(17, 127, ta)), c.weights(b_shape(127, 9, tb)), {.trans_a = ta, .trans_b = tb},
                        c.weights({9}));
      });
    }
  for (const Activation act : {Activation::None, Activation::Relu, Activation::Relu6, Activation::Sigmoid,
                               Activation::Silu, Activation::Tanh, Activation::Gelu})
    add_case(list, OpKind::Gemm, "act_" + std::string(to_string(act)), t, [act](CaseGraph& c) {
      // Inputs scaled by 4 so the activations see [-8, 8] and relu6 clips at both ends.
      return c.g.gemm(c.scaled(c.input({7, 3}), 4.0f), c.weights({3, 11}), {.activation = act}, c.weights({11}));
    });
  add_case(list, OpKind::Gemm, "strided_a", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({9, 17}, {1, 9}), c.weights({17, 5}), {}, c.weights({5}));
  });
  // A read in place and streamed under ops.cpu_small_caches by AVX-512's 28x16 kernel (its rows
  // 400 bytes apart do not alias).
  add_case(list, OpKind::Gemm, "streamed_300x16x100", t,
           [](CaseGraph& c) { return c.g.gemm(c.input({300, 100}), c.input({100, 16})); });
  // Threads that split C's columns on the cpu backend (few rows, A read in place): two chunks of
  // 32-column panels, the last panel one column wide, the last row panel 7 rows.
  add_case(list, OpKind::Gemm, "split_columns_301x67x97", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({301, 67}), c.input({67, 97}), {.activation = Activation::Relu}, c.weights({97}));
  });
  // A and B both read in place on the cpu backend (C's columns a multiple of the kernel's): four
  // 32-column panels, two depth slices, a last row panel of 7 rows.
  add_case(list, OpKind::Gemm, "b_in_place_301x600x128", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({301, 600}), c.input({600, 128}), {.activation = Activation::Relu}, c.weights({128}));
  });
  // Few rows beside many columns (a classifier at a small batch): A and B read in place on the cpu
  // backend whatever N, two whole row tiles and 9 rows, a last column panel of 9, two depth slices.
  add_case(list, OpKind::Gemm, "few_rows_37x600x1001", t, [](CaseGraph& c) {
    return c.g.gemm(c.input({37, 600}), c.input({600, 1001}), {}, c.weights({1001}));
  });
  // Rows 4 KiB apart (K = 1024), which the cpu backend reads in place with a kernel of fewer rows:
  // a ragged last row panel, two depth slices, narrow N (partial and whole panel), N = 40 (on
  // AVX-512 one panel of 48) and N = 80 (two panels of 32 and one of 16, the kernel's tail).
  for (const std::int64_t n : {5, 16, 40, 80})
    add_case(list, OpKind::Gemm, "rows_4k_apart_n" + std::to_string(n), t, [n](CaseGraph& c) {
      return c.g.gemm(c.input({31, 1024}), c.input({1024, n}), {.activation = Activation::Relu}, c.weights({n}));
    });
  // B a constant, which the cpu backend packs once when it prepares the graph, and B given at run
  // time, which each call packs: A read in place (100 rows) and packed (141), two depth slices,
  // a last column panel of 6, B plain and transposed.
  for (const std::int64_t m : {100, 141})
    for (const bool trans_b : {false, true})
      for (const bool constant : {false, true}) {
        const std::string name = std::string(constant ? "b_constant_" : "b_at_run_time_") + (trans_b ? "nt_" : "nn_") +
                                 std::to_string(m) + "x550x530";
        add_case(list, OpKind::Gemm, name, t, [=](CaseGraph& c) {
          const Shape b_shape = trans_b ? Shape{550, 530} : Shape{530, 550};
          return c.g.gemm(c.input({m, 530}), constant ? c.weights(b_shape) : c.input(b_shape), {.trans_b = trans_b},
                          c.weights({550}));
        });
      }
}

namespace {

struct ConvCase {
  std::string variant;
  Shape x, w;  // NCHW input, [K, C/groups, R, S] weights
  Conv2dParams p;
  bool bias = false;
};

}  // namespace

void add_conv2d_cases(std::vector<OpCase>& list, DType t) {
  using A = Activation;
  std::vector<ConvCase> cases = {
      {"basic_3x3", {1, 3, 8, 8}, {4, 3, 3, 3}, {}},
      {"n2_pad1_bias", {2, 4, 7, 9}, {5, 4, 3, 3}, {.pad = {1, 1, 1, 1}}, true},
      {"stride2_pad1", {1, 3, 9, 9}, {4, 3, 3, 3}, {.stride = {2, 2}, .pad = {1, 1, 1, 1}}},
      {"stride_2x3", {1, 2, 11, 13}, {3, 2, 3, 3}, {.stride = {2, 3}}},
      {"pad_asym", {1, 3, 6, 7}, {2, 3, 3, 3}, {.pad = {1, 0, 2, 1}}, true},
      {"pad_wide", {1, 2, 3, 4}, {3, 2, 2, 2}, {.pad = {3, 2, 3, 3}}, true},  // windows of padding only
      {"dilation2", {1, 3, 9, 9}, {4, 3, 3, 3}, {.pad = {2, 2, 2, 2}, .dilation = {2, 2}}},
      {"dilation_1x3", {1, 2, 7, 11}, {3, 2, 3, 2}, {.dilation = {1, 3}}},
      {"groups2", {1, 4, 6, 6}, {6, 2, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 2}, true},
      {"groups3_n2", {2, 6, 5, 5}, {9, 2, 1, 3}, {.groups = 3}},
      {"depthwise_3x3", {1, 5, 8, 7}, {5, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 5}, true},
      {"depthwise_stride2", {2, 8, 9, 9}, {8, 1, 3, 3}, {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 8}},
      {"depthwise_multiplier2", {1, 3, 6, 6}, {6, 1, 3, 3}, {.groups = 3}},
      {"pointwise_1x1", {1, 17, 5, 3}, {3, 17, 1, 1}, {}, true},
      {"pointwise_stride2", {2, 4, 7, 7}, {5, 4, 1, 1}, {.stride = {2, 2}}},
      // Strided 1x1 layers, which the cpu backend's channels-last kernel reads in place, an output
      // row at a time, where its tiles fill a row (rows of 28 pixels: 2 KiB apart, in tiles of 7;
      // two groups, in tiles of 28; strides 1x2), else copies the pixels densely: unequal strides
      // and an odd row, and 1024 channels (pixels 4 KiB apart, spaced in the copy).
      {"pointwise_stride2_c256_q28", {1, 256, 3, 56}, {40, 256, 1, 1}, {.stride = {2, 2}}},
      {"pointwise_stride2_groups2_q28", {2, 12, 5, 56}, {20, 6, 1, 1}, {.stride = {2, 2}, .groups = 2}, true},
      {"pointwise_stride_1x2_q28", {1, 8, 3, 55}, {40, 8, 1, 1}, {.stride = {1, 2}}},
      {"pointwise_stride_2x1_odd", {2, 6, 9, 7}, {5, 6, 1, 1}, {.stride = {2, 1}}},
      {"pointwise_stride_1x3_c1024", {1, 1024, 4, 10}, {3, 1024, 1, 1}, {.stride = {1, 3}}, true},
      {"pointwise_groups3_n2", {2, 6, 5, 3}, {9, 2, 1, 1}, {.groups = 3}, true},  // read in place, last tile short
      {"kernel_1x3", {1, 3, 5, 9}, {2, 3, 1, 3}, {.pad = {0, 1, 0, 1}}},
      {"kernel_5x2", {1, 2, 9, 6}, {3, 2, 5, 2}, {}},
      {"kernel_equals_input", {2, 3, 3, 3}, {4, 3, 3, 3}, {}, true},
      {"image_1x1", {1, 3, 1, 1}, {2, 3, 1, 1}, {}},
      {"single_channel", {1, 1, 17, 13}, {1, 1, 3, 3}, {}},
      {"odd_17x13_k7", {1, 3, 17, 13}, {7, 3, 3, 3}, {.pad = {1, 1, 1, 1}}, true},
      {"wide_channels_c33", {1, 33, 6, 5}, {17, 33, 3, 3}, {.pad = {1, 1, 1, 1}}},
      // More im2col columns than the cpu backend buffers at once, and more than one GEMM block.
      {"large_c32_40x40_k17", {1, 32, 40, 40}, {17, 32, 3, 3}, {.pad = {1, 1, 1, 1}}, true},
      // The cpu backend's direct conv: images sharing the micro-kernel's columns, filters past a
      // whole register tile, depth past one cache slice, a pointwise layer read in place.
      {"pointwise_n3_small_planes", {3, 5, 3, 4}, {7, 5, 1, 1}, {}, true},
      {"pointwise_n2_in_place", {2, 3, 20, 20}, {16, 3, 1, 1}, {}},
      // Inputs the cpu backend streams under ops.cpu_small_caches: AVX-512's 7x48 kernel (96
      // filters, a tie with 14x32), 14x32 with its 16-wide tail panel (112 filters), and 6x64 in
      // two panels (128 filters).
      {"pointwise_streamed_k96", {2, 8, 20, 20}, {96, 8, 1, 1}, {}, true},
      {"pointwise_streamed_k112", {2, 8, 20, 20}, {112, 8, 1, 1}, {}},
      {"pointwise_streamed_k128", {2, 8, 20, 20}, {128, 8, 1, 1}, {}, true},
      {"n3_k29_3x3", {3, 3, 5, 6}, {29, 3, 3, 3}, {.pad = {1, 1, 1, 1}}, true},
      {"n2_large_planes_3x3", {2, 3, 24, 24}, {5, 3, 3, 3}, {.pad = {1, 1, 1, 1}}, true},  // one image per copy
      {"deep_c48_3x3", {1, 48, 6, 7}, {15, 48, 3, 3}, {.pad = {1, 1, 1, 1}}},
      {"groups4_k20_stride2", {1, 8, 9, 9}, {20, 2, 3, 3}, {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 4}},
      // Depthwise sweeps: 5x5 and 7x7 filters, strides 1 and 2 and unequal, dilation, odd sizes.
      {"depthwise_5x5_stride2_odd", {1, 4, 11, 9}, {4, 1, 5, 5}, {.stride = {2, 2}, .pad = {2, 2, 2, 2}, .groups = 4}, true},
      {"depthwise_7x7", {1, 2, 13, 12}, {2, 1, 7, 7}, {.pad = {3, 3, 3, 3}, .groups = 2}},
      // Channels past 64 + 32 + 16 with a remainder, for the channels-last kernel's vector chunks.
      {"depthwise_c117", {1, 117, 9, 11}, {117, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 117}, true},
      {"depthwise_c80_5x5_stride2", {2, 80, 12, 13}, {80, 1, 5, 5}, {.stride = {2, 2}, .pad = {2, 2, 2, 2}, .groups = 80}},
      // Its unit-stride blocks of 8, 7, 4, 3 and 2 pixels, checked where they reach into the
      // padding: 5x5 with 32 + 16 channels over 24 columns; 3x3 unpadded, 21 columns (7 + 7 + 7);
      // 5x5 over 14 (7 + 7); 3x3 over 11 columns of 16 + 8 channels (4 + 4 + 3 under AVX2); 3x3
      // over 15 columns (8 + 7).
      {"depthwise_c48_5x5_q24", {1, 48, 5, 24}, {48, 1, 5, 5}, {.pad = {2, 2, 2, 2}, .groups = 48}, true},
      {"depthwise_c32_3x3_q21", {2, 32, 5, 23}, {32, 1, 3, 3}, {.groups = 32}, true},
      {"depthwise_c32_5x5_q14", {1, 32, 3, 14}, {32, 1, 5, 5}, {.pad = {2, 2, 2, 2}, .groups = 32}, true},
      {"depthwise_c24_3x3_q11", {1, 24, 4, 11}, {24, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 24}, true},
      {"depthwise_c48_3x3_q15", {1, 48, 4, 15}, {48, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 48}},
      {"depthwise_c48_3x3_q15_unpadded", {1, 48, 4, 17}, {48, 1, 3, 3}, {.groups = 48}},
      // General blocks (strided): 4 + 4 + 1 columns over 64 + 8 channels; 4 + 4 + 4 + 3 over 32 +
      // 16, padded only below and right; 5x5 unpadded, 4 + 4 + 4 + 2 over 32 + 8; stride 3.
      {"depthwise_c72_stride2_q9", {1, 72, 5, 17}, {72, 1, 3, 3}, {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 72}},
      {"depthwise_c48_stride2_q15_pad_after", {1, 48, 5, 30}, {48, 1, 3, 3},
       {.stride = {2, 2}, .pad = {0, 0, 1, 1}, .groups = 48}, true},
      {"depthwise_c40_5x5_stride2_q14", {2, 40, 6, 31}, {40, 1, 5, 5}, {.stride = {2, 2}, .groups = 40}},
      // 3x3 /2 layers that stream from memory under the tests' caches, whose rows run in pairs (with
      // AVX-512, on 1 thread; on 4 the bands are single rows): 16 + 16 + 8 channels over 10 columns
      // (8 + 2), a pair reading the padding below; nine rows, the last alone.
      {"depthwise_c40_stride2_row_pairs", {2, 40, 15, 19}, {40, 1, 3, 3},
       {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 40}, true},
      {"depthwise_c40_stride2_row_pairs_odd", {1, 40, 17, 19}, {40, 1, 3, 3},
       {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 40}},
      // Pixel-major bands (AVX2: every chunk of a block, 16 channels at 3x3 and 8 at 5x5, before the
      // next block; the 5x5 stride-1 cases above too): 3x3 layers of 32 channels, unrolled, over 14
      // columns (4 + 4 + 4 + 2), padded, and over 11 (4 + 4 + 3) with SiLU, which the kernel applies
      // row by row; two columns wide, padded unevenly (1 left, 2 right), so that each of the 3
      // output columns reads padding. 48 channels over 33 columns (8 blocks of 4 + 1) and 96 with a
      // bias (on more threads, groups of 64 and 32 channels, the second unrolled), both in cache
      // under the machine's caches only: under the tests' they stream, in f32 pixel-major past the
      // caches (DepthwiseFinish::streamed; the 96 on 1 thread), in f16 and bf16 chunk-major.
      {"depthwise_c32_3x3_pixel_major_q14", {2, 32, 9, 14}, {32, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 32}, true},
      {"depthwise_c32_3x3_pixel_major_silu", {1, 32, 13, 11}, {32, 1, 3, 3},
       {.pad = {1, 1, 1, 1}, .groups = 32, .activation = A::Silu}, true},
      {"depthwise_c32_3x3_pixel_major_w2", {1, 32, 5, 2}, {32, 1, 3, 3}, {.pad = {1, 1, 0, 2}, .groups = 32}},
      {"depthwise_c48_3x3_pixel_major_q33", {1, 48, 4, 33}, {48, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 48}, true},
      {"depthwise_c96_3x3_pixel_major_bias", {1, 96, 5, 9}, {96, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 96}, true},
      {"depthwise_c72_stride3_q9", {1, 72, 5, 26}, {72, 1, 3, 3},
       {.stride = {3, 3}, .pad = {1, 1, 1, 1}, .groups = 72}},
      // General blocks (dilated): 4 + 4 + 2 columns over 32 + 8 channels.
      {"depthwise_c40_dilated_q10", {1, 40, 6, 10}, {40, 1, 3, 3}, {.pad = {2, 2, 2, 2}, .dilation = {2, 2}, .groups = 40}},
      // A row of 7 as one block reaching into the padding at both ends; 4 channels past 16.
      {"depthwise_c20_5x5_q7", {1, 20, 7, 7}, {20, 1, 5, 5}, {.pad = {2, 2, 2, 2}, .groups = 20}, true},
      {"depthwise_stride_1x2_dilated_asym",
       {2, 3, 9, 10},
       {3, 1, 3, 3},
       {.stride = {1, 2}, .pad = {1, 2, 0, 1}, .dilation = {2, 1}, .groups = 3}},
      {"depthwise_3x1_stride_2x1", {1, 3, 8, 5}, {3, 1, 3, 1}, {.stride = {2, 1}, .pad = {1, 0, 1, 0}, .groups = 3}},
      {"depthwise_stride3_dilation2", {1, 2, 12, 11}, {2, 1, 3, 3}, {.stride = {3, 3}, .pad = {2, 2, 2, 2}, .dilation = {2, 2}, .groups = 2}},
      {"grouped_dilated_strided_asym",
       {2, 6, 11, 10},
       {4, 3, 3, 2},
       {.stride = {2, 3}, .pad = {1, 2, 0, 1}, .dilation = {2, 1}, .groups = 2, .activation = A::Relu},
       true},
      // Pixels 4 KiB apart (C = 1024, or 512 at stride 2): 1x1 layers the cpu backend's
      // channels-last kernel reads in place with a kernel of 8 rows (7 filters; 40 in a whole and
      // a partial panel, two images each with a short last tile), a 3x3 layer from a copy with the
      // pixels spaced out.
      {"pointwise_c1024", {1, 1024, 3, 5}, {7, 1024, 1, 1}, {}, true},
      {"pointwise_c1024_k40_n2", {2, 1024, 4, 5}, {40, 1024, 1, 1}, {.activation = A::Relu}, true},
      {"stride2_c512_3x3", {1, 512, 5, 5}, {6, 512, 3, 3}, {.stride = {2, 2}, .pad = {1, 1, 1, 1}}},
      // Taps that land almost only in padding, past what a padded copy should hold (the cpu
      // backend's direct loop): huge stride and padding, huge dilation, a depthwise one.
      {"sparse_window_stride_pad", {1, 2, 3, 3}, {3, 2, 2, 2}, {.stride = {100, 100}, .pad = {100, 100, 100, 100}}, true},
      {"sparse_window_dilated_groups", {2, 4, 2, 3}, {4, 2, 2, 2}, {.pad = {45, 45, 45, 45}, .dilation = {90, 90}, .groups = 2}},
      {"sparse_window_depthwise", {1, 3, 2, 2}, {3, 1, 2, 2}, {.stride = {70, 70}, .pad = {70, 70, 70, 70}, .groups = 3}, true},
      // 3x3 stride-1 layers for the cpu backend's Winograd F(4x4, 3x3) (ctest ops.cpu_winograd
      // forces it on every such case): unequal padding, filters past a register tile with a
      // remainder, 1024 channels (rows 4 KiB apart) over more tiles than one chunk holds, and
      // transformed filters larger than L2 (the chunk's work shared between threads).
      {"winograd_pad_2_0_1_2_k40", {1, 20, 9, 11}, {40, 20, 3, 3}, {.pad = {2, 0, 1, 2}}, true},
      {"winograd_c1024_three_chunks", {1, 1024, 20, 24}, {5, 1024, 3, 3}, {.pad = {1, 1, 1, 1}}},
      {"winograd_c96_k96", {1, 96, 8, 8}, {96, 96, 3, 3}, {.pad = {1, 1, 1, 1}}, true},
  };
  for (const A act : {A::Relu, A::Relu6, A::Sigmoid, A::Silu, A::Tanh, A::Gelu})
    cases.push_back({"act_" + std::string(to_string(act)), {1, 3, 5, 5}, {4, 3, 3, 3},
                     {.pad = {1, 1, 1, 1}, .activation = act}, true});
  // Every case once more channels-last: the same problem, with x (and y) stored NHWC.
  for (const ConvCase& cc : std::vector<ConvCase>(cases)) {
    ConvCase nhwc = cc;
    nhwc.variant += "_nhwc";
    nhwc.p.layout = Layout::NHWC;
    cases.push_back(nhwc);
  }
  for (const ConvCase& cc : cases)
    add_case(list, OpKind::Conv2d, cc.variant, t, [cc](CaseGraph& c) {
      const Tensor x0 = c.input(stored(cc.p.layout, cc.x));
      const Tensor x = cc.p.activation == A::None ? x0 : c.scaled(x0, 4.0f);
      return c.g.conv2d(x, c.weights(cc.w), cc.p, cc.bias ? c.weights({cc.w[0]}) : Tensor{});
    });
  // Residual epilogues, act(conv + bias + residual), on the GEMM and depthwise paths, in both layouts.
  for (const Layout layout : {Layout::NCHW, Layout::NHWC})
    for (ConvCase cc : std::vector<ConvCase>{
             {"residual_relu_bias", {2, 5, 7, 6}, {5, 5, 3, 3}, {.pad = {1, 1, 1, 1}, .activation = A::Relu}, true},
             {"residual_no_bias_1x1", {1, 17, 5, 3}, {6, 17, 1, 1}, {}},
             {"residual_silu_3x3_c24", {2, 24, 9, 7}, {33, 24, 3, 3}, {.pad = {1, 1, 1, 1}, .activation = A::Silu}, true},
             {"residual_depthwise_silu", {1, 6, 7, 9}, {6, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 6, .activation = A::Silu},
              true},
             // Channel groups of 64 (2 + 1 of 8, split where images and row bands leave threads short of
             // tasks), each finished over its own channels: SiLU stride 1, ReLU on a strided 5x5.
             {"residual_depthwise_silu_c136", {1, 136, 5, 6}, {136, 1, 3, 3},
              {.pad = {1, 1, 1, 1}, .groups = 136, .activation = A::Silu}, true},
             {"residual_depthwise_relu_c72_stride2", {2, 72, 9, 7}, {72, 1, 5, 5},
              {.stride = {2, 2}, .pad = {2, 2, 2, 2}, .groups = 72, .activation = A::Relu}, true},
             // A pixel-major 5x5 band (AVX2), its groups of 64 + 16 channels on 4 threads.
             {"residual_depthwise_silu_c80_5x5", {1, 80, 6, 9}, {80, 1, 5, 5},
              {.pad = {2, 2, 2, 2}, .groups = 80, .activation = A::Silu}, true},
             // Pixel-major bands (AVX2) of layers that stream under the tests' caches, whose sums take
             // bias, residual and activation in registers and go to y past the caches (finish_sums,
             // DepthwiseFinish::streamed; under the machine's caches, stored in it): ReLU6 at 3x3 over
             // 32 channels, ReLU at 5x5 over 48.
             {"residual_depthwise_relu6_c32_streamed", {2, 32, 9, 14}, {32, 1, 3, 3},
              {.pad = {1, 1, 1, 1}, .groups = 32, .activation = A::Relu6}, true},
             {"residual_depthwise_relu_c48_5x5_streamed", {2, 48, 8, 12}, {48, 1, 5, 5},
              {.pad = {2, 2, 2, 2}, .groups = 48, .activation = A::Relu}, true},
             // Chunk-major bands on every set whose sums take bias, residual and activation in
             // registers (DepthwiseFinish::in_registers), channels past the last vector after them:
             // 19 channels at stride 1, 43 at 3x3 /2.
             {"residual_depthwise_relu6_c19", {2, 19, 7, 9}, {19, 1, 3, 3},
              {.pad = {1, 1, 1, 1}, .groups = 19, .activation = A::Relu6}, true},
             {"residual_depthwise_relu_c43_stride2", {1, 43, 17, 19}, {43, 1, 3, 3},
              {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 43, .activation = A::Relu}, true},
             // Bands of stride 2 across that stream chunk by chunk (AVX-512), the same epilogue in
             // registers: ReLU6 at 5x5 /2 over 80 channels (on 4 threads, groups of 64 + 16) and 12
             // columns; 3x3 at a stride of 1 down and 2 across over 48 channels, no pairs of rows.
             {"residual_depthwise_relu6_c80_5x5_stride2_streamed", {2, 80, 13, 23}, {80, 1, 5, 5},
              {.stride = {2, 2}, .pad = {2, 2, 2, 2}, .groups = 80, .activation = A::Relu6}, true},
             {"residual_depthwise_relu6_c48_stride1x2_streamed", {2, 48, 10, 21}, {48, 1, 3, 3},
              {.stride = {1, 2}, .pad = {1, 1, 1, 1}, .groups = 48, .activation = A::Relu6}, true},
             // A 3x3 /2 layer that streams under the tests' caches, its rows in pairs on 1 and 4 threads
             // (on 4, in channel groups of 64 + 16): SiLU and the residual on both rows of a pair, over
             // 13 columns (8 checked, 4 unchecked, 1).
             {"residual_depthwise_silu_c80_stride2_pairs", {1, 80, 32, 25}, {80, 1, 3, 3},
              {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 80, .activation = A::Silu}, true},
             // The cpu backend's channels-last GEMM finishes whole register tiles in y itself:
             // 48 filters over 35 pixels, one panel of AVX-512's 7x48 kernel in whole tiles of 7
             // (14x32 would compute two whole tiles of 14 and a partial one), three of the 6x16; a
             // stride-2 1x1 layer; 600 channels by 3 row taps, whose partial sums (a call per depth
             // slice, each over the 3 taps) pass through y before the epilogue.
             {"residual_relu6_1x1_k48", {2, 20, 5, 7}, {48, 20, 1, 1}, {.activation = A::Relu6}, true},
             // AVX-512's 7x48 kernel: 136 filters over 45 pixels (the last tile of 7 short, copied)
             // and 390 over 20 with partial panels, 144 in three with SiLU after the kernel. Its
             // 14x32 kernel with a last panel of 16: 80 filters with SiLU, 70 by 3x3 taps; 112 over
             // 28 pixels, 104 by 3x1 taps over 56 (below), and two groups of 112.
             {"residual_relu_1x1_k136", {1, 24, 5, 9}, {136, 24, 1, 1}, {.activation = A::Relu}, true},
             {"residual_silu_1x1_k144_n2", {2, 40, 7, 8}, {144, 40, 1, 1}, {.activation = A::Silu}, true},
             {"residual_silu_1x1_k80_n2", {2, 16, 7, 7}, {80, 16, 1, 1}, {.activation = A::Silu}, true},
             {"residual_relu_1x1_k390", {1, 8, 4, 5}, {390, 8, 1, 1}, {.activation = A::Relu}, true},
             {"residual_relu_1x1_k112", {2, 24, 4, 7}, {112, 24, 1, 1}, {.activation = A::Relu}, true},
             {"residual_relu_1x1_groups2_k224", {1, 8, 4, 7}, {224, 4, 1, 1}, {.groups = 2, .activation = A::Relu},
              true},
             {"residual_silu_3x1_k104", {1, 6, 7, 8}, {104, 6, 3, 1}, {.pad = {1, 0, 1, 0}, .activation = A::Silu},
              true},
             {"residual_relu6_3x3_k70", {1, 9, 6, 7}, {70, 9, 3, 3}, {.pad = {1, 1, 1, 1}, .activation = A::Relu6},
              true},
             {"residual_1x1_stride2_k32", {1, 8, 9, 9}, {32, 8, 1, 1}, {.stride = {2, 2}}, true},
             // AVX-512's 6x64 kernel for 1x1 layers of 64 filters: 35 pixels an image (the last
             // tile of 6 short, copied; 8.75 KiB of input, past an eighth of ops.cpu_small_caches'
             // L3, which fetches tiles ahead), 520 channels (more than one depth slice) with SiLU
             // after, two groups of 64, and at stride 2 over 25 pixels.
             {"residual_relu_1x1_k64_n2", {2, 32, 5, 7}, {64, 32, 1, 1}, {.activation = A::Relu}, true},
             {"residual_silu_1x1_k64_c520", {1, 520, 6, 6}, {64, 520, 1, 1}, {.activation = A::Silu}, true},
             {"residual_relu6_1x1_groups2_k128", {1, 10, 4, 5}, {128, 5, 1, 1}, {.groups = 2, .activation = A::Relu6},
              true},
             {"residual_1x1_stride2_k64", {1, 16, 9, 9}, {64, 16, 1, 1}, {.stride = {2, 2}}, true},
             // 200 shallow filters: whole panels and a partial one, all in one task.
             {"residual_relu_1x1_c8_k200", {1, 8, 5, 7}, {200, 8, 1, 1}, {.activation = A::Relu}, true},
             {"residual_relu_3x1_c600_k32", {1, 600, 6, 5}, {32, 600, 3, 1}, {.pad = {1, 0, 1, 0}, .activation = A::Relu},
              true},
             // Activations that are not a clamp run over the tiles' stored rows, as one run where
             // a tile's rows hold every filter (64, 48, 32).
             {"residual_sigmoid_1x1_k64", {1, 16, 6, 7}, {64, 16, 1, 1}, {.activation = A::Sigmoid}, true},
             {"residual_silu_1x1_k48", {2, 20, 5, 7}, {48, 20, 1, 1}, {.activation = A::Silu}, true},
             {"residual_tanh_1x1_k32", {1, 8, 4, 7}, {32, 8, 1, 1}, {.activation = A::Tanh}, true},
             // Strided layers: each output row is a segment, its whole tiles finished in y.
             {"residual_relu_7x7_stride2_c3", {1, 3, 12, 36}, {32, 3, 7, 7},
              {.stride = {2, 2}, .pad = {3, 3, 3, 3}, .activation = A::Relu}, true},
             {"residual_silu_3x3_stride2_k40", {1, 5, 9, 32}, {40, 5, 3, 3},
              {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .activation = A::Silu}, true},
             // Output rows of 84 pixels, whole tiles for every kernel's rows (14, 6, 28), so that
             // whole tasks of them go filter panel by panel.
             {"residual_relu_3x3_stride2_q84", {2, 3, 5, 168}, {32, 3, 3, 3},
              {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .activation = A::Relu}, true},
         }) {
      cc.p.layout = layout;
      if (layout == Layout::NHWC) cc.variant += "_nhwc";
      add_case(list, OpKind::Conv2d, cc.variant, t, [cc](CaseGraph& c) {
        const auto extent = [&](int i) {
          return window_output_size(cc.x[2 + i], cc.w[2 + i], cc.p.stride[i], cc.p.pad[i], cc.p.pad[2 + i], cc.p.dilation[i]);
        };
        const Tensor residual = c.input(stored(cc.p.layout, {cc.x[0], cc.w[0], extent(0), extent(1)}));
        const Tensor x = c.input(stored(cc.p.layout, cc.x));
        // Scaled so that the activations see both sides of their bends (relu6 clips at 6).
        return c.g.conv2d(cc.p.activation == A::None ? x : c.scaled(x, 4.0f), c.weights(cc.w), cc.p,
                          cc.bias ? c.weights({cc.w[0]}) : Tensor{}, {}, residual);
      });
    }
  add_case(list, OpKind::Conv2d, "weights_as_input", t, [](CaseGraph& c) {
    return c.g.conv2d(c.input({1, 3, 6, 6}), c.input({2, 3, 3, 3}), {.pad = {1, 1, 1, 1}}, c.input({2}));
  });
  // The same channels-last for AVX-512's 6x64 kernel, its filters packed at run time: 64 filters
  // over 324 pixels, 54 tiles of 6 (on one thread, tasks of 8).
  add_case(list, OpKind::Conv2d, "weights_as_input_1x1_k64_nhwc", t, [](CaseGraph& c) {
    return c.g.conv2d(c.input(stored(Layout::NHWC, {1, 12, 18, 18})), c.input({64, 12, 1, 1}),
                      {.layout = Layout::NHWC}, c.input({64}));
  });
  // A 3x3 layer that the cpu backend runs by Winograd, its filters transformed at run time as a
  // training step's are, 16 at a time: 40 filters (two lane groups, a partial one, an empty one
  // of the last panel), 33 channels, 24 tiles over two images.
  add_case(list, OpKind::Conv2d, "weights_as_input_winograd_k40_nhwc", t, [](CaseGraph& c) {
    return c.g.conv2d(c.input(stored(Layout::NHWC, {2, 33, 13, 11})), c.input({40, 33, 3, 3}),
                      {.pad = {1, 1, 1, 1}, .layout = Layout::NHWC}, c.input({40}));
  });
  // A sliced view: every other column of a [1, 2, 7, 14] buffer, rows padded to 14.
  add_case(list, OpKind::Conv2d, "strided_input", t, [](CaseGraph& c) {
    return c.g.conv2d(c.input({1, 2, 7, 7}, {196, 98, 14, 2}), c.weights({3, 2, 3, 3}), {.pad = {1, 1, 1, 1}});
  });
}

}  // namespace porta::cases::detail
