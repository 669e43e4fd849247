#pragma once
// OpenBLAS's sgemm, timed and verified like porta's kernels: a second CPU reference for f32 GEMM
// beside oneDNN (`--impl openblas`). It is not a porta provider; porta-bench calls it directly, on
// the threads of the cpu device it stands beside.
#include "problems.hpp"

namespace porta::bench {

// `problem` run by OpenBLAS, ready to time (prepare_problem calls it for Provider::OpenBlas): its
// row says "unsupported", and why, for anything but an f32 GEMM (or batched MatMul) on a cpu
// device, or when this porta-bench was built without OpenBLAS.
Prepared prepare_openblas(const Problem& problem, const Target& target, const RunSettings& settings);

}  // namespace porta::bench
