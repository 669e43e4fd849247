// porta.Graph and porta.Tensor: every builder call of include/porta/graph.hpp, with its parameters
// as keywords named as in C++; enums as strings ("relu", "NHWC", "bf16").
#include <pybind11/stl.h>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"

namespace porta::python {

namespace {

using namespace pybind11::literals;
using Int2 = std::array<std::int64_t, 2>;
using Int4 = std::array<std::int64_t, 4>;

Tensor or_none(const std::optional<Tensor>& t) { return t.value_or(Tensor{}); }

py::tuple shape_tuple(const Shape& shape) { return py::tuple(py::cast(shape)); }

Tensor constant(Graph& g, const std::string& name, const py::array& values, const std::string& dtype) {
  const DType t = dtype_of_array(values, dtype);
  const Storage s = storage_of(values, t, "constant '" + name + "'");
  return g.constant_bytes(name, s.shape(), t, s.bytes());
}

Tensor variable(Graph& g, const std::string& name, const py::array& values, const std::string& dtype) {
  const DType t = dtype_of_array(values, dtype);
  const Storage s = storage_of(values, t, "variable '" + name + "'");
  const auto b = s.bytes();
  return g.variable_bytes(name, s.shape(), t, std::make_shared<const std::vector<std::byte>>(b.begin(), b.end()));
}

Tensor pool(Graph& g, OpKind op, Tensor x, Int2 kernel, Int2 stride, Int4 pad, Int2 dilation, bool ceil_mode,
            bool count_include_pad, const std::string& layout, const std::string& name) {
  const Pool2dParams p{.kernel = kernel, .stride = stride, .pad = pad, .dilation = dilation, .ceil_mode = ceil_mode,
                       .count_include_pad = count_include_pad, .layout = parse_layout(layout)};
  return op == OpKind::MaxPool2d ? g.max_pool2d(x, p, name) : g.avg_pool2d(x, p, name);
}

void bind_binary_and_unary(py::class_<Graph>& c) {
  using Binary = Tensor (Graph::*)(Tensor, Tensor, std::string);
  const std::pair<const char*, Binary> binary[] = {
      {"add", &Graph::add}, {"sub", &Graph::sub}, {"mul", &Graph::mul}, {"div", &Graph::div}, {"pow", &Graph::pow}};
  for (const auto& [op, fn] : binary)
    c.def(op, [fn](Graph& g, Tensor a, Tensor b, std::string name) { return (g.*fn)(a, b, std::move(name)); },
          "a"_a, "b"_a, "name"_a = "", "Elementwise, with numpy broadcasting.");
  using Unary = Tensor (Graph::*)(Tensor, std::string);
  const std::pair<const char*, Unary> unary[] = {{"relu", &Graph::relu},       {"relu6", &Graph::relu6},
                                                 {"sigmoid", &Graph::sigmoid}, {"silu", &Graph::silu},
                                                 {"tanh", &Graph::tanh},       {"erf", &Graph::erf},
                                                 {"sqrt", &Graph::sqrt},       {"reciprocal", &Graph::reciprocal},
                                                 {"hard_swish", &Graph::hard_swish}};
  for (const auto& [op, fn] : unary)
    c.def(op, [fn](Graph& g, Tensor x, std::string name) { return (g.*fn)(x, std::move(name)); }, "x"_a,
          "name"_a = "", "Elementwise activation or math.");
  c.def(
      "hard_sigmoid",
      [](Graph& g, Tensor x, float alpha, float beta, std::string name) {
        return g.hard_sigmoid(x, {.alpha = alpha, .beta = beta}, std::move(name));
      },
      "x"_a, "alpha"_a = 0.2f, "beta"_a = 0.5f, "name"_a = "",
      "max(0, min(1, alpha * x + beta)), as ONNX HardSigmoid.");
}

void bind_linear(py::class_<Graph>& c) {
  c.def(
      "matmul",
      [](Graph& g, Tensor a, Tensor b, bool trans_a, bool trans_b, std::string name) {
        return g.matmul(a, b, {.trans_a = trans_a, .trans_b = trans_b}, std::move(name));
      },
      "a"_a, "b"_a, "trans_a"_a = false, "trans_b"_a = false, "name"_a = "",
      "Batched matrix product with numpy-broadcast batch dims; trans_a/trans_b transpose the last two dims.");
  c.def(
      "gemm",
      [](Graph& g, Tensor a, Tensor b, std::optional<Tensor> c, bool trans_a, bool trans_b, float alpha, float beta,
         const std::string& activation, std::string name) {
        const GemmParams p{.trans_a = trans_a, .trans_b = trans_b, .alpha = alpha, .beta = beta,
                           .activation = parse_activation(activation)};
        return g.gemm(a, b, p, or_none(c), std::move(name));
      },
      "a"_a, "b"_a, "c"_a = py::none(), "trans_a"_a = false, "trans_b"_a = false, "alpha"_a = 1.0f, "beta"_a = 1.0f,
      "activation"_a = "none", "name"_a = "",
      "activation(alpha * op(A) @ op(B) + beta * C): A [M, K], B [K, N], C broadcast to [M, N].");
  c.def(
      "conv2d",
      [](Graph& g, Tensor x, Tensor w, std::optional<Tensor> bias, std::optional<Tensor> residual, Int2 stride,
         Int4 pad, Int2 dilation, std::int64_t groups, const std::string& activation, const std::string& layout,
         std::string name) {
        const Conv2dParams p{.stride = stride, .pad = pad, .dilation = dilation, .groups = groups,
                             .activation = parse_activation(activation), .layout = parse_layout(layout)};
        return g.conv2d(x, w, p, or_none(bias), std::move(name), or_none(residual));
      },
      "x"_a, "w"_a, "bias"_a = py::none(), "residual"_a = py::none(), "stride"_a = Int2{1, 1},
      "pad"_a = Int4{0, 0, 0, 0}, "dilation"_a = Int2{1, 1}, "groups"_a = 1, "activation"_a = "none",
      "layout"_a = "NCHW", "name"_a = "",
      "activation(conv(x, w) + bias + residual); w is [K, C/groups, R, S], pad is (top, left, bottom, right).");
}

void bind_layers(py::class_<Graph>& c) {
  c.def("clip", [](Graph& g, Tensor x, float min, float max, std::string name) {
    return g.clip(x, min, max, std::move(name));
  }, "x"_a, "min"_a, "max"_a, "name"_a = "");
  c.def("gelu", [](Graph& g, Tensor x, bool tanh_approximation, std::string name) {
    return g.gelu(x, {.tanh_approximation = tanh_approximation}, std::move(name));
  }, "x"_a, "tanh_approximation"_a = false, "name"_a = "", "GELU: exact (erf) unless tanh_approximation.");
  c.def("batchnorm", [](Graph& g, Tensor x, Tensor scale, Tensor bias, Tensor mean, Tensor var, float epsilon,
                        std::string name) {
    return g.batchnorm(x, scale, bias, mean, var, {.epsilon = epsilon}, std::move(name));
  }, "x"_a, "scale"_a, "bias"_a, "mean"_a, "var"_a, "epsilon"_a = 1e-5f, "name"_a = "",
        "Inference batch normalization over dim 1; scale, bias, mean and var are [C].");
  for (const auto& [op, kind] :
       {std::pair{"max_pool2d", OpKind::MaxPool2d}, std::pair{"avg_pool2d", OpKind::AvgPool2d}})
    c.def(op, [kind](Graph& g, Tensor x, Int2 kernel, Int2 stride, Int4 pad, Int2 dilation, bool ceil_mode,
                     bool count_include_pad, const std::string& layout, const std::string& name) {
      return pool(g, kind, x, kernel, stride, pad, dilation, ceil_mode, count_include_pad, layout, name);
    }, "x"_a, "kernel"_a, "stride"_a = Int2{1, 1}, "pad"_a = Int4{0, 0, 0, 0}, "dilation"_a = Int2{1, 1},
          "ceil_mode"_a = false, "count_include_pad"_a = false, "layout"_a = "NCHW", "name"_a = "",
          "2-D pooling; count_include_pad applies to average pooling only.");
  c.def("global_avg_pool", [](Graph& g, Tensor x, const std::string& layout, std::string name) {
    return g.global_avg_pool(x, GlobalPoolParams{.layout = parse_layout(layout)}, std::move(name));
  }, "x"_a, "layout"_a = "NCHW", "name"_a = "", "[N, C, H, W] -> [N, C, 1, 1] (NHWC: -> [N, 1, 1, C]).");
  c.def(
      "softmax",
      [](Graph& g, Tensor x, std::int64_t axis, std::string name, std::optional<Tensor> mask) {
        return mask ? g.softmax(x, axis, *mask, std::move(name)) : g.softmax(x, axis, std::move(name));
      },
      "x"_a, "axis"_a = -1, "name"_a = "", "mask"_a = py::none(),
      "Softmax along `axis`; with a mask, softmax(x + mask), the mask broadcasting to x.");
  c.def(
      "attention",
      [](Graph& g, Tensor q, Tensor k, Tensor v, std::optional<Tensor> mask, bool causal, float scale,
         std::string name) {
        return g.attention(q, k, v, {.scale = scale, .causal = causal}, or_none(mask), std::move(name));
      },
      "q"_a, "k"_a, "v"_a, "mask"_a = py::none(), "causal"_a = false, "scale"_a = 0.0f, "name"_a = "",
      "softmax(scale * q kT + mask) v over [batch, heads, seq, head_dim]; scale 0 means 1 / sqrt(head_dim).");
  c.def("reshape", &Graph::reshape, "x"_a, "shape"_a, "name"_a = "",
        "ONNX Reshape: one dimension may be -1 (inferred), 0 copies the input's.");
  c.def("flatten", &Graph::flatten, "x"_a, "axis"_a = 1, "name"_a = "");
  c.def("transpose", &Graph::transpose, "x"_a, "perm"_a, "name"_a = "");
  c.def(
      "layer_norm",
      [](Graph& g, Tensor x, Tensor scale, std::optional<Tensor> bias, std::int64_t axis, float epsilon,
         std::string name) {
        return g.layer_norm(x, scale, or_none(bias), {.axis = axis, .epsilon = epsilon}, std::move(name));
      },
      "x"_a, "scale"_a, "bias"_a = py::none(), "axis"_a = -1, "epsilon"_a = 1e-5f, "name"_a = "",
      "ONNX LayerNormalization over the axes from `axis` on; scale and bias have their shape.");
  c.def(
      "rms_norm",
      [](Graph& g, Tensor x, Tensor scale, std::int64_t axis, float epsilon, std::string name) {
        return g.rms_norm(x, scale, {.axis = axis, .epsilon = epsilon}, std::move(name));
      },
      "x"_a, "scale"_a, "axis"_a = -1, "epsilon"_a = 1e-5f, "name"_a = "",
      "RMS normalisation over the axes from `axis` on: x / sqrt(mean(x^2) + epsilon) * scale.");
  c.def(
      "reduce",
      [](Graph& g, Tensor x, const std::string& op, std::vector<std::int64_t> axes, bool keepdims, std::string name) {
        return g.reduce(x, {.op = parse_reduction(op), .axes = std::move(axes), .keepdims = keepdims}, std::move(name));
      },
      "x"_a, "op"_a = "sum", "axes"_a = std::vector<std::int64_t>{}, "keepdims"_a = true, "name"_a = "",
      "ONNX ReduceSum/Mean/Max/Min ('sum', 'mean', 'max', 'min'); no axes: every axis.");
  c.def("concat", [](Graph& g, const std::vector<Tensor>& xs, std::int64_t axis, std::string name) {
    return g.concat(xs, axis, std::move(name));
  }, "xs"_a, "axis"_a, "name"_a = "");
  c.def("cast", [](Graph& g, Tensor x, const std::string& to, std::string name) {
    return g.cast(x, parse_dtype(to), std::move(name));
  }, "x"_a, "to"_a, "name"_a = "");
  using Ints = std::vector<std::int64_t>;
  c.def("slice", [](Graph& g, Tensor x, Ints starts, Ints ends, Ints axes, Ints steps, std::string name) {
    return g.slice(x, {std::move(starts), std::move(ends), std::move(axes), std::move(steps)}, std::move(name));
  }, "x"_a, "starts"_a, "ends"_a, "axes"_a = Ints{}, "steps"_a = Ints{}, "name"_a = "",
        "ONNX Slice: starts and ends clamped, negative ones from the end; negative steps walk backwards.");
  c.def("split", [](Graph& g, Tensor x, std::int64_t axis, const Ints& sizes, std::string name) {
    return g.split(x, axis, sizes, std::move(name));
  }, "x"_a, "axis"_a, "sizes"_a, "name"_a = "", "Pieces of `sizes` along `axis`, as Slice nodes.");
  c.def("pad", [](Graph& g, Tensor x, Ints pads, const std::string& mode, float value, std::string name) {
    return g.pad(x, {std::move(pads), parse_pad_mode(mode), value}, std::move(name));
  }, "x"_a, "pads"_a, "mode"_a = "constant", "value"_a = 0.0f, "name"_a = "",
        "ONNX Pad: the begin pads of every dim, then the end pads; mode constant, reflect or edge.");
  c.def("expand", &Graph::expand, "x"_a, "shape"_a, "name"_a = "", "numpy broadcast of x to shape (ONNX Expand).");
  c.def("gather", &Graph::gather, "data"_a, "indices"_a, "axis"_a = 0, "name"_a = "",
        "ONNX Gather: data indexed along axis by int64 or int32 indices (negative ones count from the end).");
  for (const Comparison op : {Comparison::Equal, Comparison::Less, Comparison::LessOrEqual, Comparison::Greater,
                              Comparison::GreaterOrEqual})
    c.def(std::string(to_string(op)).c_str(), [op](Graph& g, Tensor a, Tensor b, std::string name) {
      return g.compare(a, b, op, std::move(name));
    }, "a"_a, "b"_a, "name"_a = "", "Elementwise comparison with numpy broadcasting: a bool tensor.");
  c.def("logical_not", &Graph::logical_not, "x"_a, "name"_a = "");
  c.def("logical_and", &Graph::logical_and, "a"_a, "b"_a, "name"_a = "");
  c.def("logical_or", &Graph::logical_or, "a"_a, "b"_a, "name"_a = "");
  c.def("where", &Graph::where, "cond"_a, "x"_a, "y"_a, "name"_a = "",
        "ONNX Where: x where the bool cond holds, else y; all three broadcast.");
  c.def("dropout", [](Graph& g, Tensor x, Tensor step, float ratio, std::uint64_t seed, std::int32_t mask_dims,
                      std::string name, std::int64_t batch_offset) {
    return g.dropout(x, step, {.ratio = ratio, .seed = seed, .mask_dims = mask_dims, .batch_offset = batch_offset},
                     std::move(name));
  }, "x"_a, "step"_a, "ratio"_a = 0.5f, "seed"_a = 0, "mask_dims"_a = -1, "name"_a = "", "batch_offset"_a = 0,
        "Training-mode dropout: x * mask / (1 - ratio), the mask a pure function of (seed, step, element), the "
        "same on every device; step is a [1] f32 tensor, e.g. porta.autodiff.step_counter(graph). mask_dims k "
        "draws the mask over x's leading k dims only (1: stochastic depth, whole samples); -1: every element. "
        "batch_offset b: x is samples b, b + 1, ... (dim 0) of a larger batch, and draws that batch's mask.");
}

}  // namespace

std::vector<std::string> input_names(const Graph& g) {
  std::vector<std::string> names;
  for (Tensor t : g.inputs()) names.push_back(g.info(t).name);
  return names;
}

std::vector<std::string> output_names(const Graph& g) {
  std::vector<std::string> names;
  for (const auto& [name, t] : g.outputs()) names.push_back(name);
  return names;
}

void bind_graph(py::module_& m) {
  py::class_<Tensor>(m, "Tensor", "A tensor of one Graph: what its builder calls take and return.")
      .def_readonly("id", &Tensor::id)
      .def("__eq__", [](Tensor a, Tensor b) { return a == b; })
      .def("__hash__", [](Tensor t) { return t.id; })
      .def("__repr__", [](Tensor t) { return "porta.Tensor(" + std::to_string(t.id) + ")"; });

  py::class_<Graph> c(m, "Graph",
                      "An op graph. Every builder call checks its operands and infers the result's shape and dtype "
                      "at once, raising porta.Error that names the node.");
  c.def(py::init<>());
  c.def("input", [](Graph& g, std::string name, Shape shape, const std::string& dtype) {
    return g.input(std::move(name), std::move(shape), parse_dtype(dtype));
  }, "name"_a, "shape"_a, "dtype"_a = "f32", "A graph input, set at each run.");
  c.def("constant", &constant, "name"_a, "values"_a, "dtype"_a = "",
        "A constant from an array, stored in its dtype (float32, float16, ml_dtypes.bfloat16), or in `dtype` "
        "('f32', 'f16', 'bf16': floating arrays are converted, a uint16 array is bf16 bits).");
  c.def("output", &Graph::output, "name"_a, "tensor"_a, "Marks a tensor as an output named `name`.");
  c.def("variable", &variable, "name"_a, "values"_a, "dtype"_a = "",
        "State kept on the device from run to run, starting from an array (dtypes as for constant); every read "
        "in a run sees its value from before the run.");
  c.def("assign", &Graph::assign, "variable"_a, "value"_a, "After each run, `variable` holds `value`.");
  bind_linear(c);
  bind_binary_and_unary(c);
  bind_layers(c);
  c.def("shape", [](const Graph& g, Tensor t) { return shape_tuple(g.shape(t)); }, "tensor"_a);
  c.def("dtype", [](const Graph& g, Tensor t) { return std::string(to_string(g.dtype(t))); }, "tensor"_a);
  c.def_property_readonly("inputs", &input_names, "The names of the graph's inputs.");
  c.def_property_readonly("outputs", &output_names, "The names of the graph's outputs.");
  c.def("output_tensor", [](const Graph& g, const std::string& name) {
    for (const auto& [output, t] : g.outputs())
      if (output == name) return t;
    throw Error(ErrorCode::NotFound, "the graph has no output '" + name + "'");
  }, "name"_a, "The tensor of the output `name` (e.g. of a graph from porta.autodiff.training_graph).");
  c.def_property_readonly("variables", [](const Graph& g) {
    std::vector<std::string> names;
    for (const Tensor t : g.variables()) names.push_back(g.info(t).name);
    return names;
  }, "The names of the graph's variables.");
  c.def("__len__", [](const Graph& g) { return g.nodes().size(); }, "The number of nodes.");
}

}  // namespace porta::python
