#!/usr/bin/python3
# Writes the onnx_import seed corpus: small valid models covering the imported ops, each a few
# hundred bytes. Run from this folder: /usr/bin/python3 onnx_seeds.py (needs python3-onnx).
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def weights(name, *shape):
    return numpy_helper.from_array(rng.uniform(-1, 1, shape).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(file, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, file, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    onnx.save(model, f"corpus/onnx_import/{file}")


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


save("conv_relu_pool_gemm", [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Relu", ["c"], ["r"]),
    helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p"], ["f"]),
    helper.make_node("Gemm", ["f", "g", "gb"], ["y"], transB=1)],
    [value("x", ["batch", 2, 8, 8])], [value("y", ["batch", 3])],
    [weights("w", 4, 2, 3, 3), weights("b", 4), weights("g", 3, 16), weights("gb", 3)])

save("depthwise_bn_hardswish", [
    helper.make_node("Conv", ["x", "w"], ["c"], group=4, auto_pad="SAME_UPPER", dilations=[2, 2]),
    helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], epsilon=1e-3),
    helper.make_node("HardSwish", ["n"], ["h"]),
    helper.make_node("HardSigmoid", ["h"], ["y"], alpha=0.2, beta=0.5)],
    [value("x", [1, 4, 5, 5])], [value("y", [1, 4, 5, 5])],
    [weights("w", 4, 1, 3, 3), weights("s", 4), weights("bb", 4), weights("m", 4),
     numpy_helper.from_array(np.ones(4, np.float32), "v")], opset=14)

save("elementwise_broadcast", [
    helper.make_node("Add", ["x", "a"], ["t1"]),
    helper.make_node("Mul", ["t1", "x"], ["t2"]),
    helper.make_node("Sub", ["t2", "a"], ["t3"]),
    helper.make_node("Div", ["t3", "d"], ["t4"]),
    helper.make_node("Sigmoid", ["t4"], ["t5"]),
    helper.make_node("Tanh", ["t5"], ["y"])],
    [value("x", [2, 3, 4])], [value("y", [2, 3, 4])],
    [weights("a", 4), weights("d", 3, 1)])

save("clip_softmax_opset12", [
    helper.make_node("Constant", [], ["lo"], value_float=-0.5),
    helper.make_node("Clip", ["x", "lo", ""], ["c"]),
    helper.make_node("Softmax", ["c"], ["y"], axis=1)],
    [value("x", [2, 6])], [value("y", [2, 6])], opset=12)

save("clip_attrs_opset7", [
    helper.make_node("Clip", ["x"], ["c"], min=0.0, max=6.0),
    helper.make_node("Dropout", ["c"], ["y"])],
    [value("x", [1, 5])], [value("y", [1, 5])], opset=7)

save("reshape_transpose_concat", [
    helper.make_node("Reshape", ["x", "shape"], ["r"]),
    helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
    helper.make_node("Concat", ["t", "t"], ["c"], axis=2),
    helper.make_node("Identity", ["c"], ["y"])],
    [value("x", [2, 12])], [value("y", [2, 4, 6])], [ints("shape", [2, 3, 4])])

save("avgpool_global_matmul_f16", [
    helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
                     count_include_pad=1, pads=[1, 1, 1, 1]),
    helper.make_node("GlobalAveragePool", ["a"], ["g"]),
    helper.make_node("Flatten", ["g"], ["f"]),
    helper.make_node("MatMul", ["f", "m"], ["y"])],
    [value("x", [1, 3, 7, 7], TensorProto.FLOAT16)], [value("y", [1, 2], TensorProto.FLOAT16)],
    [numpy_helper.from_array(rng.uniform(-1, 1, (3, 2)).astype(np.float16), "m")])

save("unsupported_op", [helper.make_node("Resize", ["x", "", "scales"], ["y"])],
     [value("x", [1, 1, 2, 2])], [value("y", [1, 1, 4, 4])],
     [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")])

# Shape arithmetic the importer folds at load time (core/onnx/fold.cpp), as torch writes x.view(n, -1).
save("shape_fold", [
    helper.make_node("Shape", ["x"], ["s"]),
    helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
    helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
    helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
    helper.make_node("Reshape", ["x", "shape"], ["r"]),
    helper.make_node("Slice", ["s", "one", "two"], ["c"]),
    helper.make_node("ConstantOfShape", ["c"], ["k"], value=numpy_helper.from_array(np.array([0.5], np.float32))),
    helper.make_node("Range", ["zero", "n", "one_s"], ["i"]),
    helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
    helper.make_node("Unsqueeze", ["f", "axes1"], ["f1"]),
    helper.make_node("Add", ["f1", "k"], ["fk"]),
    helper.make_node("Dropout", ["r", "", "train"], ["d", "mask"]),
    helper.make_node("Mul", ["d", "fk"], ["m"]),
    helper.make_node("Squeeze", ["m"], ["y"])],
    [value("x", [2, 3, 4])], [value("y", [2, 12])],
    [ints("zero", 0), ints("axes", [0]), ints("axes1", [1]), ints("minus1", [-1]), ints("one", [1]), ints("two", [2]),
     ints("one_s", 1), numpy_helper.from_array(np.array(False), "train")], opset=15)
