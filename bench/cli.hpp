#pragma once
// porta-bench's command line as a function: main.cpp runs it, and the fuzz target
// tests/fuzz/bench_cli.cpp checks arbitrary command lines with it.
#include <stdexcept>
#include <string>
#include <vector>

namespace porta::bench {

// A mistake in the command line: one line on stderr and exit code 2.
struct ArgumentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class CliMode {
  Run,        // do what the command line says
  CheckOnly,  // parse and check it, problem shapes included; open no device, read, write or run nothing
};

// `args[0]` is the program name. Returns the exit code; throws ArgumentError for a bad command line
// and porta::Error or another std::exception for anything else that goes wrong.
int run_cli(std::vector<std::string> args, CliMode mode = CliMode::Run);

}  // namespace porta::bench
