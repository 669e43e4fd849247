// Maps each node to its kernel launcher with arguments planned once (plan/op_args); at run time
// only the device addresses are bound.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <variant>
#include <vector>

#include "backends/gpu/ops/ops.hpp"
#include "backends/gpu/plan/op_args.hpp"
#include "backends/gpu/runtime/check.hpp"
#include "backends/gpu/runtime/program.hpp"
#include "backends/gpu/runtime/vendor.hpp"
#include "core/runtime/op_math.hpp"
#include "core/runtime/plan_log.hpp"
#include "porta/error.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

// Binds the output and the first input, which every single-input kernel names x and y.
template <class Args, class Launch>
NodeLaunch unary_like(Args args, const Node& node, const gpu::DeviceLimits& limits, Launch launch) {
  return [args, x = node.inputs[0], y = node.output, limits, launch](const Bindings& b, gpuStream_t stream) mutable {
    args.x = b(x);
    args.y = b(y);
    launch(args, limits, stream);
  };
}

NodeLaunch copy_launch(const Graph& graph, const Node& node, const std::string& spec) {
  return [x = node.inputs[0], y = node.output, bytes = graph.desc(node.output).bytes(), spec](const Bindings& b,
                                                                                              gpuStream_t stream) {
    if (b(x) == b(y) || bytes == 0) return;  // the memory plan may alias a reshape with its input
    check(gpuMemcpyAsync(b(y), b(x), bytes, gpuMemcpyDeviceToDevice, stream), spec, "copying a reshape");
  };
}

NodeLaunch concat_launch(const Graph& graph, const Node& node, const std::string& spec) {
  return [copies = gpu::concat_copies(graph, node), inputs = node.inputs, y = node.output, spec](const Bindings& b,
                                                                                                 gpuStream_t stream) {
    for (std::size_t i = 0; i < copies.size(); ++i) {
      const gpu::CopyRect& c = copies[i];
      if (c.rows == 0 || c.row_bytes == 0) continue;
      check(gpuMemcpy2DAsync(b(y) + c.dst_offset, c.dst_pitch, b(inputs[i]), c.row_bytes, c.row_bytes, c.rows,
                             gpuMemcpyDeviceToDevice, stream),
            spec, "copying a concat input");
    }
  };
}

// A kernel cannot raise an error, so the indices are read back and checked on the host first (a
// blocking read, in stream order), as on OpenCL: an index out of range throws, naming the node,
// before any element is gathered. The read cannot be captured, so a program that gathers runs
// eagerly (reads_indices_back).
NodeLaunch index_gather_launch(const Graph& graph, const Node& node, const DeviceContext& context) {
  const TensorDesc& index_desc = graph.desc(node.inputs[1]);
  return [args = gpu::index_gather_args(graph, node), gather = &node, index_desc, spec = context.spec(),
          limits = context.limits()](const Bindings& b, gpuStream_t stream) mutable {
    args.data = b(gather->inputs[0]), args.indices = b(gather->inputs[1]), args.y = b(gather->output);
    std::vector<std::byte> bytes(index_desc.bytes());
    check(gpuMemcpyAsync(bytes.data(), args.indices, bytes.size(), gpuMemcpyDeviceToHost, stream), spec,
          "reading gather indices");
    check(gpuStreamSynchronize(stream), spec, "reading gather indices");
    for (std::size_t j = 0; j < static_cast<std::size_t>(index_desc.numel()); ++j)
      gather_coordinate(load_as_i64(bytes.data(), j, index_desc.dtype), args.axis, *gather);
    launch_index_gather(args, limits, stream);
  };
}

// The backward ops: two inputs each, bound to the kernels' own names.
NodeLaunch backward_launch(const Graph& graph, const Node& node, const gpu::DeviceLimits& limits) {
  const Tensor a = node.inputs[0], b = node.inputs[1], y = node.output;
  switch (node.op) {
    case OpKind::ActivationBackward:
      return [args = gpu::activation_backward_args(graph, node), a, b, y, limits](const Bindings& bind,
                                                                                  gpuStream_t stream) mutable {
        args.x = bind(a), args.dy = bind(b), args.dx = bind(y);
        launch_activation_backward(args, limits, stream);
      };
    case OpKind::MaxPool2dBackward:
      return [args = gpu::max_pool_backward_args(graph, node), a, b, y, limits](const Bindings& bind,
                                                                                gpuStream_t stream) mutable {
        args.window.x = bind(a), args.dy = bind(b), args.dx = bind(y);
        launch_max_pool_backward(args, limits, stream);
      };
    default: throw Error(ErrorCode::Internal, "backward_launch: " + std::string(to_string(node.op)));
  }
}

// Reads `node`'s i64/i32 class labels (`desc`, at `labels` on the device) back and checks them on the host:
// a blocking read, in stream order, as index_gather_launch's.
void check_labels_on_host(const Node& node, const TensorDesc& desc, const std::byte* labels, std::int64_t classes,
                          const std::string& spec, gpuStream_t stream) {
  std::vector<std::byte> bytes(desc.bytes());
  check(gpuMemcpyAsync(bytes.data(), labels, bytes.size(), gpuMemcpyDeviceToHost, stream), spec,
        "reading class labels");
  check(gpuStreamSynchronize(stream), spec, "reading class labels");
  check_labels(bytes.data(), desc.numel(), desc.dtype, classes, node);
}

// The fused loss and its gradient. A kernel cannot raise an error, so i64/i32 labels are read back and
// checked on the host first, as gather's indices are (so the program runs eagerly: reads_indices_back):
// a label out of range throws, naming the node, before the kernel runs. Only the first node of the order
// that reads a labels tensor checks it (`check_labels`): a tensor does not change within a run.
NodeLaunch cross_entropy_launch(const Graph& graph, const Node& node, const DeviceContext& context, bool check_labels) {
  const Tensor z = node.inputs[0], labels = node.inputs[1], y = node.output;
  const auto checked = [node = &node, desc = graph.desc(labels), classes = graph.shape(z).back(), labels,
                        spec = context.spec(), check_labels](const Bindings& b, gpuStream_t stream) {
    if (check_labels) check_labels_on_host(*node, desc, b(labels), classes, spec, stream);
  };
  if (node.op == OpKind::SoftmaxCrossEntropy)
    return [args = gpu::softmax_cross_entropy_args(graph, node), z, labels, y, limits = context.limits(), checked](
               const Bindings& b, gpuStream_t stream) mutable {
      checked(b, stream);
      args.z = b(z), args.labels = b(labels), args.loss = b(y);
      launch_softmax_cross_entropy(args, limits, stream);
    };
  return [args = gpu::softmax_cross_entropy_backward_args(graph, node), z, labels, dy = node.inputs[2], y,
          limits = context.limits(), checked](const Bindings& b, gpuStream_t stream) mutable {
    checked(b, stream);
    args.z = b(z), args.labels = b(labels), args.dy = b(dy), args.dz = b(y);
    launch_softmax_cross_entropy_backward(args, limits, stream);
  };
}

// PORTA_GPU_TILE=<tile name> (gpu::tile_name) runs every GEMM and conv prepared from then on that
// can take that tile with it: how the checks and the benchmarks reach each tile's kernel whatever
// the planner would choose.
std::optional<gpu::GemmTile> forced_tile() {
  const char* value = std::getenv("PORTA_GPU_TILE");
  if (value == nullptr || *value == '\0') return std::nullopt;
  if (const auto t = gpu::parse_tile(value)) return t;
  std::string known;
  for (const gpu::GemmTile t : gpu::gemm_tiles) known += (known.empty() ? "" : ", ") + gpu::tile_name(t);
  throw Error(ErrorCode::InvalidArgument, "PORTA_GPU_TILE=" + std::string(value) + ": expected one of " + known);
}

// Sets `plan` to what the GEMM or conv node will run, printed where PORTA_VERBOSE=1. `check_labels`:
// whether a cross-entropy node checks its class labels (cross_entropy_launch).
NodeLaunch node_launch(const Graph& graph, const Node& node, const DeviceContext& context,
                       const CompileOptions& options, std::string& plan, bool check_labels) {
  const gpu::DeviceLimits& limits = context.limits();
  static_assert(op_kind_count == 43, "a new OpKind: give it its case in this switch, then count it here");
  switch (node.op) {
    case OpKind::MatMul:
    case OpKind::Gemm: {
      gpu::GemmArgs args = gpu::gemm_args(graph, node);
      args.allow_tf32 = options.allow_tf32;
      const gpu::GemmProblem problem{.dtype = args.dtype, .m = args.m, .n = args.n, .k = args.k,
                                     .batches = args.batch_count, .allow_tf32 = args.allow_tf32};
      const gpu::GemmPlan chosen = gpu::plan_gemm(problem, limits, forced_tile());
      plan = "gemm " + gpu::describe(chosen, limits);
      note_plan(PORTA_GPU_BACKEND_NAME, gpu::describe(problem), plan);
      return [args, chosen, in = node.inputs, y = node.output](const Bindings& b, gpuStream_t stream) mutable {
        args.a = b(in[0]);
        args.b = b(in[1]);
        args.c = in.size() == 3 ? b(in[2]) : nullptr;
        args.y = b(y);
        launch_gemm(args, chosen, stream);
      };
    }
    case OpKind::Conv2d: {
      gpu::ConvArgs args = gpu::conv_args(graph, node);
      args.allow_tf32 = options.allow_tf32;
      if (std::string limit = gpu::conv_index_limit(args); !limit.empty())
        throw Error(ErrorCode::Unsupported, context.spec() + ": conv2d '" + node.name + "': " + limit);
      const gpu::ConvPlan chosen = gpu::plan_conv(args, limits, forced_tile());
      plan = gpu::describe(chosen, limits);
      note_plan(PORTA_GPU_BACKEND_NAME, "conv " + gpu::describe(gpu::conv_gemm_problem(args)), plan);
      return [args, chosen, in = node.inputs, slots = conv_slots(node), y = node.output](const Bindings& b,
                                                                                          gpuStream_t stream) mutable {
        args.x = b(in[0]);
        args.weights = b(in[1]);
        args.bias = slots.bias >= 0 ? b(in[slots.bias]) : nullptr;
        args.residual = slots.residual >= 0 ? b(in[slots.residual]) : nullptr;
        args.y = b(y);
        launch_conv2d(args, chosen, stream);
      };
    }
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Pow:
      return [args = gpu::binary_args(graph, node), in = node.inputs, y = node.output, limits](
                 const Bindings& b, gpuStream_t stream) mutable {
        args.a_data = b(in[0]);
        args.b_data = b(in[1]);
        args.y = b(y);
        launch_binary(args, limits, stream);
      };
    case OpKind::Relu:
    case OpKind::Clip:
    case OpKind::Sigmoid:
    case OpKind::Silu:
    case OpKind::Tanh:
    case OpKind::Gelu:
    case OpKind::Erf:
    case OpKind::Sqrt:
    case OpKind::Reciprocal:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish: return unary_like(gpu::unary_args(graph, node), node, limits, launch_unary);
    case OpKind::Cast:
      if (is_float(graph.dtype(node.inputs[0])) && is_float(graph.dtype(node.output)))
        return unary_like(gpu::unary_args(graph, node), node, limits, launch_unary);
      return unary_like(gpu::unary_args(graph, node), node, limits, launch_integer_cast);
    case OpKind::BatchNorm:
      return [args = gpu::batchnorm_args(graph, node), in = node.inputs, y = node.output, limits](
                 const Bindings& b, gpuStream_t stream) mutable {
        args.x = b(in[0]);
        args.scale = b(in[1]);
        args.bias = b(in[2]);
        args.mean = b(in[3]);
        args.var = b(in[4]);
        args.y = b(y);
        launch_batchnorm(args, limits, stream);
      };
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: return unary_like(gpu::pool_args(graph, node), node, limits, launch_pool);
    case OpKind::GlobalAvgPool:
      return unary_like(gpu::global_avg_pool_args(graph, node), node, limits, launch_global_avg_pool);
    case OpKind::Softmax: return unary_like(gpu::softmax_args(graph, node), node, limits, launch_softmax);
    case OpKind::Reduce: return unary_like(gpu::reduce_args(graph, node), node, limits, launch_reduce);
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      return [args = gpu::norm_args(graph, node), in = node.inputs, y = node.output, limits](
                 const Bindings& b, gpuStream_t stream) mutable {
        args.x = b(in[0]);
        args.scale = b(in[1]);
        args.bias = in.size() > 2 ? b(in[2]) : nullptr;
        args.y = b(y);
        launch_norm(args, limits, stream);
      };
    case OpKind::Reshape: return copy_launch(graph, node, context.spec());
    case OpKind::Transpose:
    case OpKind::Slice:
    case OpKind::Expand:
      return [args = gpu::gather_args(graph, node), x = node.inputs[0], y = node.output, limits](
                 const Bindings& b, gpuStream_t stream) mutable {
        args.x_data = b(x);
        args.y = b(y);
        launch_gather(args, limits, stream);
      };
    case OpKind::Concat: return concat_launch(graph, node, context.spec());
    case OpKind::Pad: return unary_like(gpu::pad_args(graph, node), node, limits, launch_pad);
    case OpKind::Gather: return index_gather_launch(graph, node, context);
    case OpKind::Compare:
    case OpKind::Logical:
    case OpKind::Where: break;  // refused by the device's unsupported_reason (float_only_reason)
    case OpKind::ActivationBackward:
    case OpKind::MaxPool2dBackward: return backward_launch(graph, node, limits);
    case OpKind::SoftmaxCrossEntropy:
    case OpKind::SoftmaxCrossEntropyBackward: return cross_entropy_launch(graph, node, context, check_labels);
    case OpKind::Attention:
      return [args = gpu::attention_args(graph, node), in = node.inputs, y = node.output, limits](
                 const Bindings& b, gpuStream_t stream) mutable {
        args.q = b(in[0]);
        args.k = b(in[1]);
        args.v = b(in[2]);
        args.mask = in.size() > 3 ? b(in[3]) : nullptr;
        args.y = b(y);
        launch_attention(args, limits, stream);
      };
  }
  throw Error(ErrorCode::Unsupported, context.spec() + ": no kernel for " + std::string(to_string(node.op)));
}

}  // namespace

bool reads_indices_back(const Graph& graph) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(), [&](const Node& node) {
    return node.op == OpKind::Gather || reads_class_labels(graph, node);
  });
}

PlannedLaunches plan_node_launches(const CompiledGraph& graph, const DeviceContext& context, VendorSession* vendor) {
  PlannedLaunches planned;
  planned.plans.resize(graph.order.size());
  std::set<std::int32_t> checked_labels;  // the class labels a node earlier in the order checks
  for (std::size_t step = 0; step < graph.order.size(); ++step) {
    const Node& node = graph.graph.nodes()[static_cast<std::size_t>(graph.order[step])];
    const bool check_labels =
        reads_class_labels(graph.graph, node) && checked_labels.insert(node.inputs[1].id).second;
    NodeLaunch launch = vendor != nullptr ? vendor->node_launch(graph, node) : NodeLaunch{};
    if (!launch) launch = node_launch(graph.graph, node, context, graph.options, planned.plans[step], check_labels);
    planned.launches.push_back(std::move(launch));
  }
  return planned;
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
