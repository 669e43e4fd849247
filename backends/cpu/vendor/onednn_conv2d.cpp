// Conv2d through oneDNN's convolution primitive. NHWC activations are given to oneDNN as they are
// (its channels-last kernels read them in place); for NCHW ones oneDNN picks its own layout
// ("any"), and they are reordered into it and back on every run. The weights are reordered on
// every run too. Those costs are part of what the vendor provider measures.
#include <unordered_map>
#include <variant>

#include "backends/cpu/vendor/onednn.hpp"
#include "core/runtime/plan_log.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

struct ConvPrimitive {
  memory::desc x, w, bias, y;  // porta's layouts
  dnnl::convolution_forward::primitive_desc pd;
};

ConvPrimitive conv_primitive(const HostOpArgs& args) {
  const auto& p = std::get<Conv2dParams>(args.node.params);
  const ConvDims d = conv_dims(args.inputs[0].shape(), args.inputs[1].shape(), p);
  const auto type = [&](const HostTensor& t) { return onednn::data_type(t.dtype()); };
  const auto any = [](const memory::desc& desc) { return memory::desc(desc.dims(), desc.data_type(), tag::any); };
  ConvPrimitive cp;
  const bool nhwc = p.layout == Layout::NHWC;
  const tag activations = nhwc ? tag::nhwc : tag::nchw;
  // Dims are always given in NCHW order; the tag says how they are stored.
  cp.x = memory::desc({d.n, d.c, d.h, d.w}, type(args.inputs[0]), activations);
  const memory::data_type w_type = type(args.inputs[1]);
  cp.w = d.groups == 1 ? memory::desc({d.k, d.c, d.r, d.s}, w_type, tag::oihw)
                       : memory::desc({d.groups, d.k_per_group, d.c_per_group, d.r, d.s}, w_type, tag::goihw);
  if (args.inputs.size() == 3) cp.bias = memory::desc({d.k}, type(args.inputs[2]), tag::x);
  cp.y = memory::desc({d.n, d.k, d.p, d.q}, type(args.output), activations);
  // oneDNN counts dilation from 0 (dense), ONNX from 1.
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, nhwc ? cp.x : any(cp.x), any(cp.w), cp.bias,
      nhwc ? cp.y : any(cp.y), {p.stride[0], p.stride[1]}, {p.dilation[0] - 1, p.dilation[1] - 1}, {p.pad[0], p.pad[1]},
      {p.pad[2], p.pad[3]});
  dnnl::post_ops ops;
  onednn::append_activation(ops, p.activation);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  cp.pd = dnnl::convolution_forward::primitive_desc(desc, attr, onednn::engine());
  return cp;
}

// `user` as the primitive wants it: itself, or a reordered copy.
memory as_wanted(dnnl::stream& stream, memory user, const memory::desc& wanted) {
  if (user.get_desc() == wanted) return user;
  memory copy(wanted, onednn::engine());
  dnnl::reorder(user, copy).execute(stream, user, copy);
  return copy;
}

}  // namespace

void onednn_check_conv2d(const HostOpArgs& args) { conv_primitive(args); }

void onednn_conv2d(const HostOpArgs& args) {
  if (args.output.numel() == 0) return;
  onednn::use_device_threads();
  const ConvPrimitive cp = conv_primitive(args);
  if (plans_wanted()) {
    const auto& p = std::get<Conv2dParams>(args.node.params);
    onednn::note_choice(describe(conv_dims(args.inputs[0].shape(), args.inputs[1].shape(), p), p), cp.pd);
  }
  dnnl::stream stream = onednn::stream();
  memory y_user = onednn::memory(cp.y, args.output.data);
  memory y = cp.pd.dst_desc() == cp.y ? y_user : memory(cp.pd.dst_desc(), onednn::engine());
  std::unordered_map<int, memory> conv_args{
      {DNNL_ARG_SRC, as_wanted(stream, onednn::memory(cp.x, args.inputs[0].data), cp.pd.src_desc())},
      {DNNL_ARG_WEIGHTS, as_wanted(stream, onednn::memory(cp.w, args.inputs[1].data), cp.pd.weights_desc())},
      {DNNL_ARG_DST, y}};
  if (args.inputs.size() == 3) conv_args.emplace(DNNL_ARG_BIAS, onednn::memory(cp.bias, args.inputs[2].data));
  dnnl::convolution_forward(cp.pd).execute(stream, conv_args);
  if (y != y_user) dnnl::reorder(y, y_user).execute(stream, y, y_user);
  stream.wait();
}

}  // namespace porta::detail
