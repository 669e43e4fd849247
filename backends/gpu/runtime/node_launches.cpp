// Maps each node to its kernel launcher with arguments planned once (plan/op_args); at run time
// only the device addresses are bound.
#include <cstdlib>
#include <optional>
#include <type_traits>
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

// A launch that binds the device addresses of the node's inputs to args.*inputs, in order (null for
// an optional input the node lacks), and its output's to args.*output, then calls launch(args, stream),
// or launch(args, bindings, stream) where it binds more (with_error_record).
template <class Args, class Launch, class Output, class... Inputs>
NodeLaunch bound_launch(Args args, const Node& node, Launch launch, Output output, Inputs... inputs) {
  return [args, in = node.inputs, y = node.output, launch, output, inputs...](const Bindings& b,
                                                                                gpuStream_t stream) mutable {
    std::size_t k = 0;
    ((args.*inputs = k < in.size() ? b(in[k]) : nullptr, ++k), ...);
    args.*output = b(y);
    if constexpr (std::is_invocable_v<Launch&, Args&, const Bindings&, gpuStream_t>)
      launch(args, b, stream);
    else
      launch(args, stream);
  };
}

// For an index reader (Gather, a cross-entropy op with class labels): `launch` with args.error bound
// to the node's own error record, the next slot of the run's, where its kernel reports an index out
// of range (a kernel cannot throw; the program reads the records after the run).
template <class Launch>
auto with_error_record(Launch launch, const Node& node, std::vector<const Node*>& index_readers) {
  index_readers.push_back(&node);
  const std::size_t record = index_readers.size() - 1;
  return [launch, record]<class Args>(Args& args, const Bindings& b, gpuStream_t stream) -> void {
    args.error = b.index_errors + record;
    launch(args, stream);
  };
}

template <class Args>
auto with_limits(void (*launch)(const Args&, const gpu::DeviceLimits&, gpuStream_t), const gpu::DeviceLimits& limits) {
  return [launch, limits](const Args& args, gpuStream_t stream) { launch(args, limits, stream); };
}

// The single-input kernels name their operand x and their result y.
template <class Args>
NodeLaunch unary_like(Args args, const Node& node, const gpu::DeviceLimits& limits,
                      void (*launch)(const Args&, const gpu::DeviceLimits&, gpuStream_t)) {
  return bound_launch(std::move(args), node, with_limits(launch, limits), &Args::y, &Args::x);
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

// The backward ops, bound to the kernels' own names.
NodeLaunch backward_launch(const Graph& graph, const Node& node, const gpu::DeviceLimits& limits) {
  switch (node.op) {
    case OpKind::ActivationBackward:
      return bound_launch(gpu::activation_backward_args(graph, node), node,
                          with_limits(launch_activation_backward, limits), &gpu::ActivationBackwardArgs::dx,
                          &gpu::ActivationBackwardArgs::x, &gpu::ActivationBackwardArgs::dy);
    case OpKind::MaxPool2dBackward:  // x sits in the forward pool's arguments
      return [args = gpu::max_pool_backward_args(graph, node), x = node.inputs[0], dy = node.inputs[1],
              dx = node.output, limits](const Bindings& b, gpuStream_t stream) mutable {
        args.window.x = b(x), args.dy = b(dy), args.dx = b(dx);
        launch_max_pool_backward(args, limits, stream);
      };
    case OpKind::DepthwiseFilterGradient:
      return bound_launch(gpu::depthwise_gradient_args(graph, node), node,
                          with_limits(launch_depthwise_gradient, limits), &gpu::DepthwiseGradientArgs::dw,
                          &gpu::DepthwiseGradientArgs::x, &gpu::DepthwiseGradientArgs::dy);
    default: throw Error(ErrorCode::Internal, "backward_launch: " + std::string(to_string(node.op)));
  }
}

// The fused loss and its gradient. With i64/i32 class labels their kernels report a label out of
// range in an error record, as gather's do an index.
NodeLaunch cross_entropy_launch(const Graph& graph, const Node& node, const gpu::DeviceLimits& limits,
                                std::vector<const Node*>& index_readers) {
  using Loss = gpu::SoftmaxCrossEntropyArgs;
  using Gradient = gpu::SoftmaxCrossEntropyBackwardArgs;
  if (node.op == OpKind::SoftmaxCrossEntropyBackward)  // integer labels only
    return bound_launch(gpu::softmax_cross_entropy_backward_args(graph, node), node,
                        with_error_record(with_limits(launch_softmax_cross_entropy_backward, limits), node,
                                          index_readers),
                        &Gradient::dz, &Gradient::z, &Gradient::labels, &Gradient::dy);
  const Loss args = gpu::softmax_cross_entropy_args(graph, node);
  const auto launch = with_limits(launch_softmax_cross_entropy, limits);
  if (!args.index_labels) return bound_launch(args, node, launch, &Loss::loss, &Loss::z, &Loss::labels);
  return bound_launch(args, node, with_error_record(launch, node, index_readers), &Loss::loss, &Loss::z,
                      &Loss::labels);
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

// Sets `plan` to what the GEMM or conv node will run, printed where PORTA_VERBOSE=1; adds the node
// to `index_readers` where its kernel reports indices out of range in an error record.
NodeLaunch node_launch(const Graph& graph, const Node& node, const DeviceContext& context,
                       const CompileOptions& options, std::string& plan, std::vector<const Node*>& index_readers) {
  const gpu::DeviceLimits& limits = context.limits();
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
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
      return bound_launch(
          args, node, [chosen](const gpu::GemmArgs& a, gpuStream_t stream) { launch_gemm(a, chosen, stream); },
          &gpu::GemmArgs::y, &gpu::GemmArgs::a, &gpu::GemmArgs::b, &gpu::GemmArgs::c);
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
      return bound_launch(gpu::binary_args(graph, node), node, with_limits(launch_binary, limits), &gpu::BinaryArgs::y,
                          &gpu::BinaryArgs::a_data, &gpu::BinaryArgs::b_data);
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
      return bound_launch(gpu::batchnorm_args(graph, node), node, with_limits(launch_batchnorm, limits),
                          &gpu::BatchNormArgs::y, &gpu::BatchNormArgs::x, &gpu::BatchNormArgs::scale,
                          &gpu::BatchNormArgs::bias, &gpu::BatchNormArgs::mean, &gpu::BatchNormArgs::var);
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: return unary_like(gpu::pool_args(graph, node), node, limits, launch_pool);
    case OpKind::GlobalAvgPool:
      return unary_like(gpu::global_avg_pool_args(graph, node), node, limits, launch_global_avg_pool);
    case OpKind::Softmax: return unary_like(gpu::softmax_args(graph, node), node, limits, launch_softmax);
    case OpKind::Reduce: return unary_like(gpu::reduce_args(graph, node), node, limits, launch_reduce);
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      return bound_launch(gpu::norm_args(graph, node), node, with_limits(launch_norm, limits), &gpu::NormArgs::y,
                          &gpu::NormArgs::x, &gpu::NormArgs::scale, &gpu::NormArgs::bias);
    case OpKind::Reshape: return copy_launch(graph, node, context.spec());
    case OpKind::Transpose:
    case OpKind::Slice:
    case OpKind::Expand:
      return bound_launch(gpu::gather_args(graph, node), node, with_limits(launch_gather, limits), &gpu::GatherArgs::y,
                          &gpu::GatherArgs::x_data);
    case OpKind::Concat: return concat_launch(graph, node, context.spec());
    case OpKind::Pad: return unary_like(gpu::pad_args(graph, node), node, limits, launch_pad);
    case OpKind::Gather:
      return bound_launch(gpu::index_gather_args(graph, node), node,
                          with_error_record(with_limits(launch_index_gather, limits), node, index_readers),
                          &gpu::IndexGatherArgs::y, &gpu::IndexGatherArgs::data, &gpu::IndexGatherArgs::indices);
    case OpKind::Compare:
      return bound_launch(gpu::compare_args(graph, node), node, with_limits(launch_compare, limits),
                          &gpu::CompareArgs::y, &gpu::CompareArgs::a_data, &gpu::CompareArgs::b_data);
    case OpKind::Logical:  // not's second field stays null
      return bound_launch(gpu::logical_args(graph, node), node, with_limits(launch_logical, limits),
                          &gpu::LogicalArgs::y, &gpu::LogicalArgs::a_data, &gpu::LogicalArgs::b_data);
    case OpKind::Where:
      return bound_launch(gpu::where_args(graph, node), node, with_limits(launch_where, limits), &gpu::WhereArgs::y,
                          &gpu::WhereArgs::cond_data, &gpu::WhereArgs::x_data, &gpu::WhereArgs::other_data);
    case OpKind::ActivationBackward:
    case OpKind::MaxPool2dBackward:
    case OpKind::DepthwiseFilterGradient: return backward_launch(graph, node, limits);
    case OpKind::SoftmaxCrossEntropy:
    case OpKind::SoftmaxCrossEntropyBackward: return cross_entropy_launch(graph, node, limits, index_readers);
    case OpKind::Attention:
      return bound_launch(gpu::attention_args(graph, node), node, with_limits(launch_attention, limits),
                          &gpu::AttentionArgs::y, &gpu::AttentionArgs::q, &gpu::AttentionArgs::k,
                          &gpu::AttentionArgs::v, &gpu::AttentionArgs::mask);
    case OpKind::Dropout:
      return bound_launch(gpu::dropout_args(graph, node), node, with_limits(launch_dropout, limits),
                          &gpu::DropoutArgs::y, &gpu::DropoutArgs::x, &gpu::DropoutArgs::step);
  }
  throw Error(ErrorCode::Unsupported, context.spec() + ": no kernel for " + std::string(to_string(node.op)));
}

}  // namespace

PlannedLaunches plan_node_launches(const CompiledGraph& graph, const DeviceContext& context, VendorSession* vendor) {
  PlannedLaunches planned;
  planned.plans.resize(graph.order.size());
  for (std::size_t step = 0; step < graph.order.size(); ++step) {
    const Node& node = graph.graph.nodes()[static_cast<std::size_t>(graph.order[step])];
    NodeLaunch launch = vendor != nullptr ? vendor->node_launch(graph, node) : NodeLaunch{};
    if (!launch)
      launch = node_launch(graph.graph, node, context, graph.options, planned.plans[step], planned.index_readers);
    planned.launches.push_back(std::move(launch));
  }
  return planned;
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
