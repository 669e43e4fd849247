// A tiny convolutional classifier, built once and run on every device porta finds. Each device's
// answer is compared with the reference device, as an application would check a new platform.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <porta/porta.hpp>

namespace {

std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

porta::Graph build_classifier() {
  porta::Graph g;
  auto image = g.input("image", {1, 3, 32, 32});
  auto w1 = g.constant("conv1.weight", {16, 3, 3, 3}, random_values(16 * 3 * 3 * 3, 1));
  auto b1 = g.constant("conv1.bias", {16}, random_values(16, 2));
  auto x = g.conv2d(image, w1, {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .activation = porta::Activation::Relu}, b1);
  x = g.max_pool2d(x, {.kernel = {2, 2}, .stride = {2, 2}});
  x = g.flatten(g.global_avg_pool(x));
  auto w2 = g.constant("fc.weight", {10, 16}, random_values(10 * 16, 3));
  auto b2 = g.constant("fc.bias", {10}, random_values(10, 4));
  g.output("probabilities", g.softmax(g.gemm(x, w2, {.trans_b = true}, b2)));
  return g;
}

std::vector<float> classify(const porta::Graph& graph, const std::string& device, const std::vector<float>& image) {
  porta::Executable exe = porta::Device::open(device).compile(graph);
  exe.set_input("image", image);
  exe.run();
  return exe.output("probabilities");
}

}  // namespace

int main() {
  try {
    const porta::Graph graph = build_classifier();
    const std::vector<float> image = random_values(3 * 32 * 32, 5);
    const std::vector<float> expected = classify(graph, "ref", image);
    int failures = 0;
    for (const porta::DeviceInfo& device : porta::devices()) {
      const std::vector<float> got = classify(graph, device.spec, image);
      double worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) worst = std::fmax(worst, std::fabs(got[i] - expected[i]));
      const bool ok = worst < 1e-5;
      failures += !ok;
      std::printf("%-24s %-40s max |diff| vs ref %.2e  %s\n", device.spec.c_str(), device.name.c_str(), worst,
                  ok ? "ok" : "MISMATCH");
    }
    return failures == 0 ? 0 : 1;
  } catch (const porta::Error& e) {
    std::fprintf(stderr, "porta_example: %s\n", e.what());
    return 1;
  }
}
