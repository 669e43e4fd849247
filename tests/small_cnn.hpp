#pragma once
// A small CNN of the kind porta runs (conv, batchnorm, relu, pooling, depthwise conv with bias,
// global pooling, a classifier and softmax), for the fault-injection and concurrency tests.
#include "op_cases/verify.hpp"
#include "porta/porta.hpp"

namespace porta::test {

// `width` sets the channel count, so that several threads can each run a different graph.
inline Graph small_cnn(std::uint64_t seed, DType dtype = DType::f32, std::int64_t width = 8) {
  Graph g;
  const auto weights = [&](std::string name, Shape shape) {
    std::size_t count = 1;
    for (const auto d : shape) count *= static_cast<std::size_t>(d);
    return g.constant(std::move(name), std::move(shape), cases::random_values(count, seed++), dtype);
  };
  const std::int64_t c = width;
  Tensor y = g.conv2d(g.input("image", {2, 3, 12, 12}, dtype), weights("conv1.w", {c, 3, 3, 3}),
                      {.stride = {1, 1}, .pad = {1, 1, 1, 1}});
  const Tensor ones = g.constant("bn.var", {c}, std::vector<float>(static_cast<std::size_t>(c), 1.0f), dtype);
  y = g.relu(g.batchnorm(y, weights("bn.scale", {c}), weights("bn.bias", {c}), weights("bn.mean", {c}), ones));
  y = g.max_pool2d(y, {.kernel = {2, 2}, .stride = {2, 2}});
  y = g.conv2d(y, weights("dw.w", {c, 1, 3, 3}), {.pad = {1, 1, 1, 1}, .groups = c, .activation = Activation::Relu6},
               weights("dw.b", {c}));
  y = g.flatten(g.global_avg_pool(y));
  y = g.gemm(y, weights("fc.w", {c, 10}), {}, weights("fc.b", {10}));
  g.output("probs", g.softmax(y));
  return g;
}

// Compiles, runs twice (the second run reuses what the first allocated) and returns the output.
inline std::vector<std::byte> compile_and_run(const Device& device, const Graph& graph, std::uint64_t seed = 5) {
  Executable exe = device.compile(graph);
  cases::set_random_inputs(exe, graph, seed);
  exe.run();
  exe.run();
  return exe.output_bytes("probs");
}

}  // namespace porta::test
