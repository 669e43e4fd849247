// porta.h: one function per op of the graph builder (include/porta/graph.hpp), with its parameters.
#include <algorithm>
#include <array>
#include <vector>

#include "core/c_api/handles.hpp"

using namespace porta::c_api;
using porta::Graph;

namespace {

// Runs one builder call on a live graph and hands its result to the caller.
template <class Build>
porta_status op(porta_graph* graph, porta_tensor* out, Build&& build) {
  return guard([&] {
    porta_tensor& result = out_ref(out, "out");
    result = {build(get(graph, "graph")).id};
  });
}

porta::Activation activation_of(const porta_activation& a) { return enum_of(a, porta::Activation::Gelu, "activation"); }
porta::Layout layout_of(const porta_layout& l) { return enum_of(l, porta::Layout::NHWC, "layout"); }

template <std::size_t N>
std::array<std::int64_t, N> array_of(const int64_t (&values)[N]) {
  std::array<std::int64_t, N> a{};
  std::copy(values, values + N, a.begin());
  return a;
}

porta::GemmParams gemm_params(const porta_gemm_params* params) {
  const porta_gemm_params p = params_or(params, porta_gemm_params_default(), "porta_gemm_params");
  return {.trans_a = p.trans_a != 0, .trans_b = p.trans_b != 0, .alpha = p.alpha, .beta = p.beta,
          .activation = activation_of(p.activation)};
}

porta::Conv2dParams conv2d_params(const porta_conv2d_params* params) {
  const porta_conv2d_params p = params_or(params, porta_conv2d_params_default(), "porta_conv2d_params");
  return {.stride = array_of(p.stride), .pad = array_of(p.pad), .dilation = array_of(p.dilation),
          .groups = p.groups, .activation = activation_of(p.activation), .layout = layout_of(p.layout)};
}

porta::Pool2dParams pool2d_params(const porta_pool2d_params* params) {
  const porta_pool2d_params p = params_or(params, porta_pool2d_params_default(), "porta_pool2d_params");
  return {.kernel = array_of(p.kernel), .stride = array_of(p.stride), .pad = array_of(p.pad),
          .dilation = array_of(p.dilation), .ceil_mode = p.ceil_mode != 0,
          .count_include_pad = p.count_include_pad != 0, .layout = layout_of(p.layout)};
}

}  // namespace

static_assert(PORTA_ACT_GELU == static_cast<int>(porta::Activation::Gelu));
static_assert(PORTA_REDUCE_MIN == static_cast<int>(porta::Reduction::Min));
static_assert(PORTA_NHWC == static_cast<int>(porta::Layout::NHWC));
static_assert(PORTA_PAD_EDGE == static_cast<int>(porta::PadMode::Edge));
static_assert(PORTA_GREATER_OR_EQUAL == static_cast<int>(porta::Comparison::GreaterOrEqual));
static_assert(PORTA_OR == static_cast<int>(porta::LogicalOp::Or));
static_assert(PORTA_BOOL == static_cast<int>(porta::DType::boolean));

// The ops of one shape of call: (graph, operands, name, out).
#define PORTA_BINARY_OP(fn)                                                                                 \
  porta_status porta_##fn(porta_graph* graph, porta_tensor a, porta_tensor b, const char* name, porta_tensor* out) { \
    return op(graph, out, [&](Graph& g) { return g.fn(tensor_of(a), tensor_of(b), optional_text(name)); });   \
  }
#define PORTA_UNARY_OP(fn)                                                                     \
  porta_status porta_##fn(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out) { \
    return op(graph, out, [&](Graph& g) { return g.fn(tensor_of(x), optional_text(name)); });   \
  }

extern "C" {

porta_gemm_params porta_gemm_params_default(void) {
  return {.size = sizeof(porta_gemm_params), .trans_a = 0, .trans_b = 0, .alpha = 1.0f, .beta = 1.0f,
          .activation = PORTA_ACT_NONE};
}

porta_conv2d_params porta_conv2d_params_default(void) {
  return {.size = sizeof(porta_conv2d_params), .stride = {1, 1}, .pad = {0, 0, 0, 0}, .dilation = {1, 1},
          .groups = 1, .activation = PORTA_ACT_NONE, .layout = PORTA_NCHW};
}

porta_pool2d_params porta_pool2d_params_default(void) {
  return {.size = sizeof(porta_pool2d_params), .kernel = {1, 1}, .stride = {1, 1}, .pad = {0, 0, 0, 0},
          .dilation = {1, 1}, .ceil_mode = 0, .count_include_pad = 0, .layout = PORTA_NCHW};
}

porta_status porta_matmul(porta_graph* graph, porta_tensor a, porta_tensor b, int trans_a, int trans_b,
                          const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.matmul(tensor_of(a), tensor_of(b), {.trans_a = trans_a != 0, .trans_b = trans_b != 0},
                    optional_text(name));
  });
}

porta_status porta_gemm(porta_graph* graph, porta_tensor a, porta_tensor b, porta_tensor c,
                        const porta_gemm_params* params, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.gemm(tensor_of(a), tensor_of(b), gemm_params(params), tensor_of(c), optional_text(name));
  });
}

porta_status porta_conv2d(porta_graph* graph, porta_tensor x, porta_tensor w, porta_tensor bias,
                          porta_tensor residual, const porta_conv2d_params* params, const char* name,
                          porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.conv2d(tensor_of(x), tensor_of(w), conv2d_params(params), tensor_of(bias), optional_text(name),
                    tensor_of(residual));
  });
}

PORTA_BINARY_OP(add)
PORTA_BINARY_OP(sub)
PORTA_BINARY_OP(mul)
PORTA_BINARY_OP(div)
PORTA_UNARY_OP(relu)
PORTA_UNARY_OP(relu6)
PORTA_UNARY_OP(sigmoid)
PORTA_UNARY_OP(silu)
PORTA_UNARY_OP(tanh)
PORTA_UNARY_OP(erf)
PORTA_UNARY_OP(sqrt)
PORTA_UNARY_OP(reciprocal)
PORTA_UNARY_OP(hard_swish)
PORTA_BINARY_OP(pow)

porta_status porta_hard_sigmoid(porta_graph* graph, porta_tensor x, float alpha, float beta, const char* name,
                                porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.hard_sigmoid(tensor_of(x), {.alpha = alpha, .beta = beta}, optional_text(name));
  });
}

porta_status porta_clip(porta_graph* graph, porta_tensor x, float min, float max, const char* name,
                        porta_tensor* out) {
  return op(graph, out, [&](Graph& g) { return g.clip(tensor_of(x), min, max, optional_text(name)); });
}

porta_status porta_gelu(porta_graph* graph, porta_tensor x, int tanh_approximation, const char* name,
                        porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.gelu(tensor_of(x), {.tanh_approximation = tanh_approximation != 0}, optional_text(name));
  });
}

porta_status porta_batchnorm(porta_graph* graph, porta_tensor x, porta_tensor scale, porta_tensor bias,
                             porta_tensor mean, porta_tensor var, float epsilon, const char* name,
                             porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.batchnorm(tensor_of(x), tensor_of(scale), tensor_of(bias), tensor_of(mean), tensor_of(var),
                       {.epsilon = epsilon}, optional_text(name));
  });
}

porta_status porta_max_pool2d(porta_graph* graph, porta_tensor x, const porta_pool2d_params* params,
                              const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.max_pool2d(tensor_of(x), pool2d_params(params), optional_text(name));
  });
}

porta_status porta_avg_pool2d(porta_graph* graph, porta_tensor x, const porta_pool2d_params* params,
                              const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.avg_pool2d(tensor_of(x), pool2d_params(params), optional_text(name));
  });
}

porta_status porta_global_avg_pool(porta_graph* graph, porta_tensor x, porta_layout layout, const char* name,
                                   porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.global_avg_pool(tensor_of(x), porta::GlobalPoolParams{.layout = layout_of(layout)}, optional_text(name));
  });
}

porta_status porta_softmax(porta_graph* graph, porta_tensor x, int64_t axis, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) { return g.softmax(tensor_of(x), axis, optional_text(name)); });
}

porta_status porta_reshape(porta_graph* graph, porta_tensor x, const int64_t* shape, size_t rank, const char* name,
                           porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.reshape(tensor_of(x), to_shape(shape, rank, "shape"), optional_text(name));
  });
}

porta_status porta_flatten(porta_graph* graph, porta_tensor x, int64_t axis, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) { return g.flatten(tensor_of(x), axis, optional_text(name)); });
}

porta_status porta_attention(porta_graph* graph, porta_tensor q, porta_tensor k, porta_tensor v, porta_tensor mask,
                             float scale, int causal, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.attention(tensor_of(q), tensor_of(k), tensor_of(v), {.scale = scale, .causal = causal != 0},
                       tensor_of(mask), optional_text(name));
  });
}

porta_status porta_layer_norm(porta_graph* graph, porta_tensor x, porta_tensor scale, porta_tensor bias, int64_t axis,
                              float epsilon, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.layer_norm(tensor_of(x), tensor_of(scale), tensor_of(bias), {.axis = axis, .epsilon = epsilon},
                        optional_text(name));
  });
}

porta_status porta_rms_norm(porta_graph* graph, porta_tensor x, porta_tensor scale, int64_t axis, float epsilon,
                            const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.rms_norm(tensor_of(x), tensor_of(scale), {.axis = axis, .epsilon = epsilon}, optional_text(name));
  });
}

porta_status porta_reduce(porta_graph* graph, porta_tensor x, porta_reduction reduction, const int64_t* axes,
                          size_t axis_count, int keepdims, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    const porta::ReduceParams p{.op = enum_of(reduction, porta::Reduction::Min, "reduction"),
                                .axes = to_shape(axes, axis_count, "axes"), .keepdims = keepdims != 0};
    return g.reduce(tensor_of(x), p, optional_text(name));
  });
}

porta_status porta_transpose(porta_graph* graph, porta_tensor x, const int64_t* perm, size_t rank, const char* name,
                             porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.transpose(tensor_of(x), to_shape(perm, rank, "perm"), optional_text(name));
  });
}

porta_status porta_concat(porta_graph* graph, const porta_tensor* xs, size_t count, int64_t axis, const char* name,
                          porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    if (xs == nullptr && count > 0) invalid("xs is NULL");
    std::vector<porta::Tensor> tensors;
    for (std::size_t i = 0; i < count; ++i) tensors.push_back(tensor_of(xs[i]));
    return g.concat(tensors, axis, optional_text(name));
  });
}

porta_status porta_cast(porta_graph* graph, porta_tensor x, porta_dtype to, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) { return g.cast(tensor_of(x), dtype_of(to), optional_text(name)); });
}

porta_status porta_slice(porta_graph* graph, porta_tensor x, const int64_t* starts, const int64_t* ends,
                         const int64_t* axes, const int64_t* steps, size_t count, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    porta::SliceParams p{to_shape(starts, count, "starts"), to_shape(ends, count, "ends"),
                         axes == nullptr ? porta::Shape{} : to_shape(axes, count, "axes"),
                         steps == nullptr ? porta::Shape{} : to_shape(steps, count, "steps")};
    return g.slice(tensor_of(x), p, optional_text(name));
  });
}

porta_status porta_split(porta_graph* graph, porta_tensor x, int64_t axis, const int64_t* sizes, size_t count,
                         const char* name, porta_tensor* outs) {
  return guard([&] {
    if (outs == nullptr) invalid("outs is NULL");
    const porta::Shape s = to_shape(sizes, count, "sizes");
    const std::vector<porta::Tensor> pieces = get(graph, "graph").split(tensor_of(x), axis, s, optional_text(name));
    for (std::size_t i = 0; i < pieces.size(); ++i) outs[i] = {pieces[i].id};
  });
}

porta_status porta_pad(porta_graph* graph, porta_tensor x, const int64_t* pads, size_t pad_count, porta_pad_mode mode,
                       float value, const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    const porta::PadParams p{to_shape(pads, pad_count, "pads"), static_cast<porta::PadMode>(mode), value};
    return g.pad(tensor_of(x), p, optional_text(name));
  });
}

porta_status porta_gather(porta_graph* graph, porta_tensor data, porta_tensor indices, int64_t axis, const char* name,
                          porta_tensor* out) {
  return op(graph, out,
            [&](Graph& g) { return g.gather(tensor_of(data), tensor_of(indices), axis, optional_text(name)); });
}

porta_status porta_compare(porta_graph* graph, porta_tensor a, porta_tensor b, porta_comparison comparison,
                           const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    const auto c = enum_of(comparison, porta::Comparison::GreaterOrEqual, "comparison");
    return g.compare(tensor_of(a), tensor_of(b), c, optional_text(name));
  });
}

porta_status porta_logical(porta_graph* graph, porta_logical_op op_kind, porta_tensor a, porta_tensor b,
                           const char* name, porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    const auto logical_op = enum_of(op_kind, porta::LogicalOp::Or, "logical op");
    std::vector<porta::Tensor> xs{tensor_of(a)};
    if (logical_op != porta::LogicalOp::Not) xs.push_back(tensor_of(b));
    return g.logical(logical_op, std::move(xs), optional_text(name));
  });
}

porta_status porta_where(porta_graph* graph, porta_tensor cond, porta_tensor x, porta_tensor y, const char* name,
                         porta_tensor* out) {
  return op(graph, out,
            [&](Graph& g) { return g.where(tensor_of(cond), tensor_of(x), tensor_of(y), optional_text(name)); });
}

porta_status porta_expand(porta_graph* graph, porta_tensor x, const int64_t* shape, size_t rank, const char* name,
                          porta_tensor* out) {
  return op(graph, out, [&](Graph& g) {
    return g.expand(tensor_of(x), to_shape(shape, rank, "shape"), optional_text(name));
  });
}

}  // extern "C"
