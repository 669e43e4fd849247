#pragma once
// Checkpoints: every variable of an executable (Graph::variable) as one .npy file in a folder, so
// that a training run can stop and resume (docs/training.md). A variable's file is its name with
// each byte outside [A-Za-z0-9._-] written as %XX (hex), plus ".npy". Every dtype saves and loads bit
// for bit: bf16 variables are stored as float32, whose top half is the bf16 (npy::storable).
#include <filesystem>
#include <string>

#include "porta/executable.hpp"

namespace porta::checkpoint {

std::string file_name(const std::string& variable);  // "layer1/w:0" -> "layer1%2Fw%3A0.npy"

// Creates `folder` if needed and writes every variable's current value into it.
void save(const Executable& exe, const std::filesystem::path& folder);
// Sets every variable of `exe` from its file in `folder`; other files there are ignored. Throws
// NotFound naming a missing file, ShapeMismatch for a file of another shape; a file of another dtype
// converts as npy::bytes_as says (DTypeMismatch between floats and integers).
void load(Executable& exe, const std::filesystem::path& folder);

}  // namespace porta::checkpoint
