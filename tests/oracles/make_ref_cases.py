#!/usr/bin/env python3
"""Writes ref_cases.txt: GEMM, convolution and pooling cases with PyTorch's outputs in float64, for
test_oracles.cpp to check the ref device against. The inputs are not stored: both sides draw them
from each case's seed with cases::random_values (tests/op_cases/verify.cpp), mirrored here, input i
of a case from seed + i, in the order the case names them. Run from the repository root:

    python3 tests/oracles/make_ref_cases.py > tests/oracles/ref_cases.txt
"""
import math
import struct

import torch
import torch.nn.functional as F

MASK = (1 << 64) - 1


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def random_values(count, seed):
    """cases::random_values(count, seed, -1, 1): splitmix64, 24 bits per value, rounded to f32 (never up
    to 1), zeros redrawn."""
    values, state = [], seed
    while len(values) < count:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        v = f32(-1.0 + 2.0 * ((z >> 40) * 2.0**-24))
        if v != 0.0:
            values.append(v)
    return values


def random_tensor(shape, seed):
    return torch.tensor(random_values(math.prod(shape), seed), dtype=torch.float64).reshape(shape)


ACTIVATIONS = {
    "none": lambda y: y,
    "relu": F.relu,
    "relu6": lambda y: y.clamp(0, 6),
    "sigmoid": torch.sigmoid,
    "silu": F.silu,
    "tanh": torch.tanh,
    "gelu": F.gelu,
}


def nchw(x, layout):  # a tensor stored in `layout`, seen as NCHW
    return x.permute(0, 3, 1, 2) if layout == "NHWC" else x


def stored(y, layout):  # an NCHW result, stored in `layout`
    return y.permute(0, 2, 3, 1) if layout == "NHWC" else y


def matmul(seed, a, b, trans_a=0, trans_b=0):
    A, B = random_tensor(a, seed), random_tensor(b, seed + 1)
    return torch.matmul(A.transpose(-1, -2) if trans_a else A, B.transpose(-1, -2) if trans_b else B)


def gemm(seed, a, b, c=None, trans_a=0, trans_b=0, alpha=1.0, beta=1.0, activation="none"):
    A, B = random_tensor(a, seed), random_tensor(b, seed + 1)
    y = alpha * ((A.T if trans_a else A) @ (B.T if trans_b else B))
    if c is not None:
        y = y + beta * random_tensor(c, seed + 2)
    return ACTIVATIONS[activation](y)


def conv2d(seed, x, w, bias=0, residual=0, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1,
           activation="none", layout="NCHW"):
    X, W = nchw(random_tensor(x, seed), layout), random_tensor(w, seed + 1)
    b = random_tensor([w[0]], seed + 2) if bias else None
    top, left, bottom, right = pad  # ONNX order; F.pad takes (left, right, top, bottom)
    y = F.conv2d(F.pad(X, (left, right, top, bottom)), W, b, stride=stride, dilation=dilation, groups=groups)
    if residual:
        y = y + nchw(random_tensor(list(stored(y, layout).shape), seed + 2 + bias), layout)
    return stored(ACTIVATIONS[activation](y), layout)


def max_pool2d(seed, x, kernel, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), ceil_mode=0, layout="NCHW"):
    X = nchw(random_tensor(x, seed), layout)
    top, left, bottom, right = pad
    if (top, left) == (bottom, right):  # torch's own padding, the only kind ceil_mode goes with here
        y = F.max_pool2d(X, kernel, stride, (top, left), dilation, bool(ceil_mode))
    else:
        assert not ceil_mode
        y = F.max_pool2d(F.pad(X, (left, right, top, bottom), value=-float("inf")), kernel, stride, 0, dilation)
    return stored(y, layout)


def avg_pool2d(seed, x, kernel, stride=(1, 1), pad=(0, 0, 0, 0), ceil_mode=0, count_include_pad=0, layout="NCHW"):
    X = nchw(random_tensor(x, seed), layout)
    top, left, bottom, right = pad
    if (top, left) == (bottom, right):
        y = F.avg_pool2d(X, kernel, stride, (top, left), bool(ceil_mode), bool(count_include_pad))
    else:  # sum over the window / the positions counted, both as averages over the explicitly padded input
        assert not ceil_mode
        sides = (left, right, top, bottom)
        y = F.avg_pool2d(F.pad(X, sides), kernel, stride)
        if not count_include_pad:
            y = y / F.avg_pool2d(F.pad(torch.ones_like(X), sides), kernel, stride)
    return stored(y, layout)


def global_avg_pool(seed, x, layout="NCHW"):
    return stored(nchw(random_tensor(x, seed), layout).mean(dim=(2, 3), keepdim=True), layout)


# (op, name, parameters): each parameter becomes a key=value of the data file, lists comma-separated.
CASES = [
    (matmul, "square", dict(seed=100, a=[5, 7], b=[7, 3])),
    (matmul, "batch_broadcast", dict(seed=110, a=[2, 1, 4, 6], b=[3, 6, 5])),
    (matmul, "trans_a_trans_b", dict(seed=120, a=[2, 6, 4], b=[2, 5, 6], trans_a=1, trans_b=1)),
    (matmul, "vector_matrix", dict(seed=130, a=[6], b=[6, 4])),
    (matmul, "matrix_vector", dict(seed=140, a=[3, 6], b=[6])),
    (matmul, "deep_k", dict(seed=150, a=[3, 300], b=[300, 4])),
    (gemm, "alpha_beta_c_row", dict(seed=200, a=[4, 6], b=[6, 5], c=[5], alpha=0.5, beta=-1.25)),
    (gemm, "trans_c_column_relu", dict(seed=210, a=[6, 4], b=[5, 6], c=[4, 1], trans_a=1, trans_b=1, alpha=1.5,
                                       beta=0.75, activation="relu")),
    (gemm, "c_full_gelu", dict(seed=220, a=[3, 7], b=[7, 4], c=[3, 4], activation="gelu")),
    (gemm, "no_c_tanh", dict(seed=230, a=[3, 5], b=[5, 2], alpha=2.0, activation="tanh")),
    (conv2d, "3x3_pad1_bias", dict(seed=300, x=[1, 3, 6, 6], w=[4, 3, 3, 3], bias=1, pad=[1, 1, 1, 1])),
    (conv2d, "stride2_asymmetric_pad", dict(seed=310, x=[1, 2, 7, 8], w=[3, 2, 3, 3], stride=[2, 2], pad=[0, 1, 2, 1])),
    (conv2d, "5x3_stride_2_1", dict(seed=320, x=[1, 2, 9, 7], w=[2, 2, 5, 3], stride=[2, 1], pad=[2, 1, 2, 1])),
    (conv2d, "dilation_2_3", dict(seed=330, x=[1, 2, 9, 9], w=[2, 2, 3, 3], dilation=[2, 3], pad=[2, 3, 2, 3])),
    (conv2d, "groups2_bias", dict(seed=340, x=[1, 4, 5, 5], w=[6, 2, 3, 3], groups=2, bias=1, pad=[1, 1, 1, 1])),
    (conv2d, "depthwise_stride2_bias", dict(seed=350, x=[1, 4, 7, 7], w=[4, 1, 3, 3], groups=4, bias=1, stride=[2, 2],
                                            pad=[1, 1, 1, 1])),
    (conv2d, "depthwise_multiplier2_dilated", dict(seed=360, x=[1, 3, 6, 5], w=[6, 1, 3, 3], groups=3,
                                                   dilation=[2, 1], pad=[0, 1, 1, 0])),
    (conv2d, "1x1_stride2_batch2", dict(seed=370, x=[2, 5, 5, 4], w=[3, 5, 1, 1], bias=1, stride=[2, 2])),
    (conv2d, "residual_silu", dict(seed=380, x=[1, 3, 5, 5], w=[4, 3, 3, 3], bias=1, residual=1, pad=[1, 1, 1, 1],
                                   activation="silu")),
    (conv2d, "nhwc_groups_dilated_relu6", dict(seed=390, x=[1, 6, 6, 4], w=[4, 2, 3, 3], groups=2, bias=1,
                                               stride=[1, 2], dilation=[2, 2], pad=[1, 2, 2, 1], activation="relu6",
                                               layout="NHWC")),
    (max_pool2d, "3x3_stride2_pad1", dict(seed=400, x=[1, 2, 7, 7], kernel=[3, 3], stride=[2, 2], pad=[1, 1, 1, 1])),
    (max_pool2d, "2x2_ceil", dict(seed=410, x=[1, 2, 7, 9], kernel=[2, 2], stride=[2, 2], ceil_mode=1)),
    (max_pool2d, "dilated_pad_ceil", dict(seed=420, x=[1, 2, 8, 8], kernel=[3, 3], stride=[2, 2], pad=[1, 1, 1, 1],
                                          dilation=[2, 2], ceil_mode=1)),
    (max_pool2d, "2x3_asymmetric_pad", dict(seed=430, x=[1, 2, 6, 7], kernel=[2, 3], stride=[1, 2], pad=[0, 1, 1, 2])),
    (max_pool2d, "nhwc_3x3_stride2", dict(seed=440, x=[1, 7, 6, 3], kernel=[3, 3], stride=[2, 2], pad=[1, 1, 1, 1],
                                          layout="NHWC")),
    (avg_pool2d, "3x3_pad1_exclude_pad", dict(seed=500, x=[1, 2, 6, 6], kernel=[3, 3], pad=[1, 1, 1, 1])),
    (avg_pool2d, "3x3_stride2_include_pad_ceil", dict(seed=510, x=[1, 2, 8, 8], kernel=[3, 3], stride=[2, 2],
                                                      pad=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)),
    (avg_pool2d, "2x2_ceil_exclude_pad", dict(seed=520, x=[1, 2, 7, 9], kernel=[2, 2], stride=[2, 2], ceil_mode=1)),
    (avg_pool2d, "asymmetric_pad_include_pad", dict(seed=530, x=[1, 2, 6, 5], kernel=[3, 2], stride=[2, 1],
                                                    pad=[1, 0, 2, 1], count_include_pad=1)),
    (avg_pool2d, "asymmetric_pad_exclude_pad", dict(seed=540, x=[1, 2, 6, 5], kernel=[3, 2], stride=[2, 1],
                                                    pad=[1, 0, 2, 1])),
    (avg_pool2d, "nhwc_3x3_stride2_include_pad", dict(seed=550, x=[2, 5, 6, 3], kernel=[3, 3], stride=[2, 2],
                                                      pad=[1, 1, 1, 1], count_include_pad=1, layout="NHWC")),
    (global_avg_pool, "nchw", dict(seed=600, x=[2, 3, 5, 4])),
    (global_avg_pool, "nhwc", dict(seed=610, x=[2, 5, 4, 3], layout="NHWC")),
]


def text(value):
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


print("# PyTorch's outputs (float64, from the f32 inputs) for GEMM, convolution and pooling cases. Each case is")
print("# a line 'op name key=value...' and a line of its output, row-major. seed=s: input i holds")
print(f"# cases::random_values(count, s + i, -1, 1). PyTorch {torch.__version__}.")
print("# Regenerate: python3 tests/oracles/make_ref_cases.py > tests/oracles/ref_cases.txt")
# A line for the test to confirm that the inputs drawn here are the ones the C++ side draws.
print("random_values seed=1 " + " ".join(f"{v!r}" for v in random_values(8, 1)))
for op, name, params in CASES:
    y = op(**params)
    print(op.__name__, name, " ".join(f"{key}={text(value)}" for key, value in params.items()))
    print(" ".join(f"{v:.10g}" for v in y.flatten().tolist()))
