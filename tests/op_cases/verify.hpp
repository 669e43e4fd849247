#pragma once
// Differential verification against the reference device.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "porta/porta.hpp"

namespace porta::cases {

// NMSE = sum (got - want)^2 / sum want^2; max_abs the largest |got - want|. Non-finite values in
// `got` where `want` is finite never pass. The spans must have the same size (else InvalidArgument).
struct Comparison {
  double nmse = 0.0;
  double max_abs = 0.0;
  std::int64_t non_finite = 0;  // elements of `got` that are NaN or Inf where `want` is finite
  std::int64_t worst = -1;      // index of the first non-finite element, else of the largest error
  double want_max_abs = 0.0;    // largest |want|, the scale max_abs is judged against
  double error_energy = 0.0;    // sum (got - want)^2 and sum want^2 over the finite elements: nmse's terms
  double want_energy = 0.0;
};
Comparison compare(std::span<const float> got, std::span<const float> want);

// The NMSE a correct kernel stays under, for the op and storage dtype of its output: 0 for ops
// that only move or select values (shape ops, cast, relu, clip, max pool), otherwise set by the
// rounding of the output dtype and whether the op accumulates. `tf32`: compiled with allow_tf32,
// where f32 products (MatMul, Gemm, Conv2d) may round their operands to tf32's 10 mantissa bits,
// as f16 does, and are judged as f16 is.
double nmse_threshold(OpKind op, DType dtype, bool tf32 = false);
// The largest |got - want| a correct kernel reaches, relative to the largest |want|. It catches a
// few wrong elements in a large output that the NMSE alone would average away.
double max_abs_tolerance(OpKind op, DType dtype, bool tf32 = false);

// Seeded uniform values in [lo, hi): never zeros-only, reproducible across platforms.
std::vector<float> random_values(std::size_t count, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);

// Sets every input of `exe` to seeded random values in [-1, 1) (input i uses seed + i), but an
// integer input that gathers read as indices to valid rows (an embedding's token ids). A strided
// input gets a buffer covering everything its strides address.
void set_random_inputs(Executable& exe, const Graph& graph, std::uint64_t seed);
// The values set_random_inputs gives input `index` (in Graph::inputs() order).
std::vector<float> random_input_values(const Graph& graph, std::size_t index, std::uint64_t seed);

struct Verification {
  bool passed = false;
  double nmse = 0.0;       // worst over the outputs
  double max_abs = 0.0;
  std::string detail;      // which output failed and how, when it did
};

// How far an output may be from ref's: its NMSE, and its largest |got - want| relative to the largest |want|.
// An output whose values are all smaller than `scale` is judged as if they were that large (an output
// of zeros cannot be judged relative to itself).
struct Limits {
  double nmse = 0.0;
  double max_abs = 0.0;
  double scale = 0.0;
};
// One op's: nmse_threshold and max_abs_tolerance.
Limits limits_of(OpKind op, DType dtype, bool tf32 = false);

// Checks one output (`got`) against ref's (`want`) as verify_against_ref does for each, and adds
// the outcome to `v` (start it with passed = true).
void check_output(Verification& v, const std::string& name, const Shape& shape, DType dtype, OpKind op, bool tf32,
                  std::span<const float> got, std::span<const float> want);
// The same with limits of the caller's: an output of a whole graph is judged by every op it depends
// on, not by one (tests/graph_gen/differential.cpp).
void check_output(Verification& v, const std::string& name, const Shape& shape, DType dtype, const Limits& limits,
                  std::span<const float> got, std::span<const float> want);

// Compiles `graph` on `device` (with poisoned memory) and on `oracle`, runs both on the same seeded
// inputs and compares every output under nmse_threshold and max_abs_tolerance (op, dtype of the
// output, options.allow_tf32). Fails too when the oracle itself produces a non-finite value. Errors
// from compile or run (e.g. Unsupported) propagate.
Verification verify_against(const Graph& graph, const Device& device, const Device& oracle, OpKind op,
                            std::uint64_t seed, const CompileOptions& options = {});
// verify_against the ref device, the oracle of every test.
Verification verify_against_ref(const Graph& graph, const Device& device, OpKind op, std::uint64_t seed,
                                const CompileOptions& options = {});

}  // namespace porta::cases
