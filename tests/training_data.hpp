#pragma once
// Synthetic classification data the training tests learn: random uniform values, and images of bars
// whose orientation is the class.
#include <cstdint>
#include <random>
#include <vector>

namespace porta::test {

struct Data {
  std::vector<float> x, onehot;
};

inline std::vector<float> uniform(std::size_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Images of 8 x 8 pixels in four classes by the orientation of a bar (horizontal, vertical and the two
// diagonals) at a random offset, under noise: learnable by orientation filters, whatever the position.
constexpr std::int64_t images = 64, side = 8, kinds = 4;

inline Data bars(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  Data d;
  d.x.resize(images * side * side);
  d.onehot.assign(images * kinds, 0.0f);
  for (std::int64_t n = 0; n < images; ++n) {
    const std::int64_t kind = n % kinds, offset = static_cast<std::int64_t>(rng() % 6) + 1;
    d.onehot[n * kinds + kind] = 1.0f;
    for (std::int64_t i = 0; i < side; ++i)
      for (std::int64_t j = 0; j < side; ++j) {
        const bool on = kind == 0 ? i == offset : kind == 1 ? j == offset : kind == 2 ? i - j == offset - 3
                                                                                     : i + j == offset + 4;
        d.x[(n * side + i) * side + j] = (on ? 1.0f : 0.0f) + noise(rng);
      }
  }
  return d;
}

}  // namespace porta::test
