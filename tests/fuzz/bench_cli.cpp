// Fuzzes porta-bench's command line. The input is split at NUL bytes into arguments, which
// run_cli parses and checks (problem shapes included) without opening a device, touching a file
// or making weights. It must return or throw ArgumentError (a bad command line) or porta::Error;
// a crash, a sanitizer report or any other exception is a bug.
#include <cstdint>
#include <string>
#include <vector>

#include "cli.hpp"
#include "porta/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"porta-bench"};
  std::string arg;
  for (std::size_t i = 0; i <= size; ++i) {
    if (i == size || data[i] == 0) {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += static_cast<char>(data[i]);
    }
  }
  try {
    porta::bench::run_cli(args, porta::bench::CliMode::CheckOnly);
  } catch (const porta::bench::ArgumentError&) {
  } catch (const porta::Error&) {
  }
  return 0;
}
