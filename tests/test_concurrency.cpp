// Threads sharing one device: several compile and run different executables at once, and several
// take turns with one executable. On the cpu backend results must match single-threaded runs bit
// for bit (docs/reliability.md says how to run it under ThreadSanitizer).
#include <doctest/doctest.h>

#include <mutex>
#include <thread>

#include "small_cnn.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

constexpr int thread_count = 4;

// cpu in both thread modes, and the first OpenCL device where there is one (bitwise against its
// own single-threaded runs: the same kernels on the same device).
std::vector<std::string> shared_devices() {
  std::vector<std::string> specs{"cpu", "cpu:threads=2"};
  for (const BackendStatus& b : backends())
    if (b.name == "opencl" && !b.devices.empty()) specs.push_back("opencl:0");
  return specs;
}

// A different graph per thread: other widths and dtypes reach other kernels.
Graph graph_for(int t) {
  return small_cnn(static_cast<std::uint64_t>(100 + t), all_dtypes[t % 3], 4 + 3 * t);
}

// Runs `rounds` calls of same(t) -> "output matches the single-threaded one" on each of
// thread_count threads at once, then checks that every call matched and none threw.
template <class Same>
void check_threads(int rounds, const Same& same) {
  std::vector<int> mismatches(thread_count, 0);
  std::vector<std::string> errors(thread_count);
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int round = 0; round < rounds; ++round)
          if (!same(t)) ++mismatches[t];
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < thread_count; ++t) {
    CAPTURE(t);
    CHECK(errors[t] == "");
    CHECK(mismatches[t] == 0);
  }
}

}  // namespace

TEST_SUITE("concurrency") {
  TEST_CASE("threads compile and run different executables on one device at once") {
    for (const std::string& spec : shared_devices()) {
      CAPTURE(spec);
      const Device device = Device::open(spec);
      std::vector<Graph> graphs;
      std::vector<std::vector<std::byte>> expected;
      for (int t = 0; t < thread_count; ++t) {
        graphs.push_back(graph_for(t));
        expected.push_back(compile_and_run(device, graphs.back()));
      }
      check_threads(3, [&](int t) { return compile_and_run(device, graphs[t]) == expected[t]; });
    }
  }

  TEST_CASE("threads take turns with one executable, each with inputs of its own") {
    for (const std::string& spec : shared_devices()) {
      CAPTURE(spec);
      const Graph graph = small_cnn(21);
      Executable exe = Device::open(spec).compile(graph);
      std::vector<std::vector<std::byte>> expected;
      for (int t = 0; t < thread_count; ++t) {
        cases::set_random_inputs(exe, graph, static_cast<std::uint64_t>(t));
        exe.run();
        expected.push_back(exe.output_bytes("probs"));
      }
      std::mutex turn;  // one thread's set_input, run and output at a time
      check_threads(4, [&](int t) {
        const std::lock_guard lock(turn);
        cases::set_random_inputs(exe, graph, static_cast<std::uint64_t>(t));
        exe.run();
        return exe.output_bytes("probs") == expected[t];
      });
    }
  }
}

}  // namespace porta::test
