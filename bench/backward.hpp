#pragma once
// The backward pass of conv and linear layers as training runs it: porta's graph is the forward
// op's gradients made by autodiff::gradients, timed beside oneDNN's backward primitives on the same
// shapes and layouts (onednn_backward.cpp). Each gradient is a problem of its own, so a row is one
// gradient: a conv's data gradient dx and filter gradient dw, a GEMM's dA and dB.
#include <cstdint>
#include <string>
#include <vector>

#include "problems.hpp"

namespace porta::bench {

enum class Gradient { Data, Filter };  // dx and dw of a conv; dA and dB of c = gemm(a, b)

// A graph with inputs x, w and dy (a, b and dc for a GEMM) and the one gradient as its output
// ("dx", "dw"; "da", "db"): y = conv2d(x, w) with the gradient of sum(y * dy). Its op column is
// conv2d_backward_data or conv2d_backward_filter (gemm_backward_a, gemm_backward_b), its FLOPs
// those of the forward op. A conv must have no bias or activation; a GEMM no transposed a and no
// batch (what oneDNN is given here), else InvalidArgument.
Problem conv_backward_problem(const cases::ConvProblem& p, Gradient gradient, std::string workload = {});
Problem gemm_backward_problem(const cases::GemmProblem& p, Gradient gradient, std::string workload = {});

bool is_backward(const Problem& problem);

// The `backward` suite: ResNet-50's convs and EfficientNet-B0's depthwise layers at batch 8, NHWC,
// each gradient (but the first layer's data gradient); then linear layers' (BERT-base and
// ResNet-50's FC) GEMM gradients. f32.
std::vector<Problem> backward_problems();

// The problem back from a row's params (the oneDNN side reads it from there).
cases::ConvProblem conv_problem_of(const Json& params);
cases::GemmProblem gemm_problem_of(const Json& params);

// oneDNN's backward primitive for `problem` (convolution_backward_data or _weights, with the forward
// primitive as hint; matmul with the transposes of the gradient), on the cpu device's threads, timed
// and then verified against the oracle; prepare_problem calls it for the vendor provider of a
// backward problem. Unsupported, and why, off the cpu backend or where oneDNN's module
// (onednn_backward.hpp) was not built or does not load.
Prepared prepare_onednn_backward(const Problem& problem, const Target& target, const RunSettings& settings);

}  // namespace porta::bench
