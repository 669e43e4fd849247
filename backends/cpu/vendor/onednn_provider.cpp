#include <omp.h>

#include <array>
#include <vector>

#include <tbb/task_arena.h>

#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/vendor/onednn.hpp"
#include "core/runtime/plan_log.hpp"

namespace porta::detail {
namespace onednn {

const dnnl::engine& engine() {
  static const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

dnnl::memory::data_type data_type(DType t) {
  switch (t) {
    case DType::f16: return dnnl::memory::data_type::f16;
    case DType::bf16: return dnnl::memory::data_type::bf16;
    default: break;  // f32; the vendor libraries see float tensors only
  }
  return dnnl::memory::data_type::f32;
}

void use_device_threads() {
  // This oneDNN build threads with OpenMP, not TBB.
  omp_set_num_threads(tbb::this_task_arena::max_concurrency());
}

dnnl::stream stream() { return dnnl::stream(engine()); }

void note_choice(std::string_view problem, const dnnl::primitive_desc_base& pd) {
  note_plan("cpu", problem, std::string("onednn ") + pd.impl_info_str());
}

void append_activation(dnnl::post_ops& ops, Activation activation) {
  using dnnl::algorithm;
  switch (activation) {
    case Activation::None: return;
    case Activation::Relu: return ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
    case Activation::Relu6: return ops.append_eltwise(1.0f, algorithm::eltwise_clip, 0.0f, 6.0f);
    case Activation::Sigmoid: return ops.append_eltwise(1.0f, algorithm::eltwise_logistic, 0.0f, 0.0f);
    case Activation::Silu: return ops.append_eltwise(1.0f, algorithm::eltwise_swish, 1.0f, 0.0f);
    case Activation::Tanh: return ops.append_eltwise(1.0f, algorithm::eltwise_tanh, 0.0f, 0.0f);
    case Activation::Gelu: return ops.append_eltwise(1.0f, algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
  }
}

dnnl::memory memory(const dnnl::memory::desc& desc, const std::byte* data) {
  // oneDNN takes non-const handles; the primitives only read their sources.
  return dnnl::memory(desc, engine(), const_cast<std::byte*>(data));
}

}  // namespace onednn

namespace {

using Check = void (*)(const HostOpArgs&);

Check check_for(OpKind op) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (op) {
    case OpKind::MatMul: return onednn_check_matmul;
    case OpKind::Gemm: return onednn_check_gemm;
    case OpKind::Conv2d: return onednn_check_conv2d;
    default: return nullptr;
  }
}

std::string unsupported_reason(const Graph& graph, const Node& node) {
  const Check check = check_for(node.op);
  if (check == nullptr) return {};  // porta's kernel runs it
  if (node.op == OpKind::Conv2d && std::get<Conv2dParams>(node.params).residual)
    return "the oneDNN provider has no residual epilogue: keep the add as its own node";
  std::vector<HostTensor> inputs;
  for (const Tensor t : node.inputs) inputs.push_back({&graph.desc(t), nullptr});
  try {
    check(HostOpArgs{node, inputs, {&graph.desc(node.output), nullptr}});
  } catch (const dnnl::error& e) {
    return "oneDNN has no " + std::string(to_string(graph.dtype(node.output))) + " " +
           std::string(to_string(node.op)) + " for this case on this CPU (" + e.what() + ")";
  }
  return {};
}

HostVendorProvider make_provider() {
  HostVendorProvider provider{.library = "oneDNN", .kernels = cpu_kernels(), .unsupported_reason = unsupported_reason,
                              .conv_layout = Layout::NHWC};
  provider.kernels[static_cast<std::size_t>(OpKind::MatMul)] = onednn_matmul;
  provider.kernels[static_cast<std::size_t>(OpKind::Gemm)] = onednn_gemm;
  provider.kernels[static_cast<std::size_t>(OpKind::Conv2d)] = onednn_conv2d;
  return provider;
}

}  // namespace

const HostVendorProvider& onednn_provider() {
  static const HostVendorProvider provider = make_provider();
  return provider;
}

}  // namespace porta::detail
