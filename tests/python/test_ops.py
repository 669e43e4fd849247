"""Odd-shape GEMMs and convolutions, and every other op, on each device against numpy."""
import math

import numpy as np
import pytest
from conftest import assert_close, random

import porta


def run(device, graph, **inputs):
    """The graph's outputs on `device`; skipped where the device declines a form of an op (OpenCL: NHWC)."""
    try:
        exe = device.compile(graph, poison_memory=True)
    except porta.Error as e:
        if e.code == porta.ErrorCode.Unsupported:
            pytest.skip(e.message)
        raise
    return exe.run(**inputs)


def conv_reference(x, w, bias, stride, pad, dilation, groups):
    """NCHW convolution in numpy, pad as (top, left, bottom, right)."""
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (h + pad[0] + pad[2] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    ow = (wd + pad[1] + pad[3] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    y = np.zeros((n, k, oh, ow))
    kg = k // groups
    for g in range(groups):
        for i in range(r):
            for j in range(s):
                rows = slice(i * dilation[0], i * dilation[0] + stride[0] * (oh - 1) + 1, stride[0])
                cols = slice(j * dilation[1], j * dilation[1] + stride[1] * (ow - 1) + 1, stride[1])
                patch = xp[:, g * cg:(g + 1) * cg, rows, cols]
                y[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", patch, w[g * kg:(g + 1) * kg, :, i, j])
    return y + bias.reshape(1, -1, 1, 1)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (37, 1001, 129), (5, 3, 300), (64, 17, 1)])
def test_gemm_odd_shapes(device, m, n, k):
    g = porta.Graph()
    a, b, c = random((k, m), 1), random((n, k), 2), random((n,), 3)
    ta, tb = g.input("a", (k, m)), g.constant("b", b)
    y = g.gemm(ta, tb, g.constant("c", c), trans_a=True, trans_b=True, alpha=0.5, beta=2.0, activation="relu")
    g.output("y", y)
    assert_close(run(device, g, a=a)["y"], np.maximum(0.5 * a.T @ b.T + 2 * c, 0))


@pytest.mark.parametrize("batch,trans_b", [((3,), False), ((2, 1), True)])
def test_matmul_broadcast(device, batch, trans_b):
    g = porta.Graph()
    a, b = random((*batch, 7, 13), 4), random((3, 5, 13) if trans_b else (13, 5), 5)
    g.output("y", g.matmul(g.input("a", a.shape), g.input("b", b.shape), trans_b=trans_b))
    want = a @ (np.swapaxes(b, -1, -2) if trans_b else b)
    assert_close(run(device, g, a=a, b=b)["y"], want)


@pytest.mark.parametrize("shape,k,rs,stride,pad,dilation,groups", [
    ((1, 3, 17, 23), 5, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    ((2, 6, 9, 7), 6, (3, 3), (1, 1), (0, 2, 1, 0), (2, 1), 6),
    ((1, 8, 5, 5), 12, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 4),
    ((3, 4, 11, 11), 7, (5, 2), (3, 2), (2, 0, 2, 1), (1, 2), 1),
])
def test_conv2d_odd_shapes(device, shape, k, rs, stride, pad, dilation, groups):
    x, w, bias = random(shape, 6), random((k, shape[1] // groups, *rs), 7), random((k,), 8)
    g = porta.Graph()
    y = g.conv2d(g.input("x", shape), g.constant("w", w), g.constant("bias", bias), stride=stride, pad=pad,
                 dilation=dilation, groups=groups)
    g.output("y", y)
    assert_close(run(device, g, x=x)["y"], conv_reference(x, w, bias, stride, pad, dilation, groups))


def test_conv2d_nhwc_residual_activation(device):
    x, w, r = random((1, 6, 6, 3), 9), random((4, 3, 3, 3), 10), random((1, 6, 6, 4), 11)
    g = porta.Graph()
    y = g.conv2d(g.input("x", x.shape), g.constant("w", w), residual=g.input("r", r.shape), pad=(1, 1, 1, 1),
                 activation="relu6", layout="NHWC")
    g.output("y", y)
    want = conv_reference(x.transpose(0, 3, 1, 2), w, np.zeros(4), (1, 1), (1, 1, 1, 1), (1, 1), 1)
    want = np.clip(want.transpose(0, 2, 3, 1) + r, 0, 6)
    assert_close(run(device, g, x=x, r=r)["y"], want)


def erf(v):
    return np.vectorize(math.erf)(v)


UNARY = {
    "relu": lambda v: np.maximum(v, 0),
    "relu6": lambda v: np.clip(v, 0, 6),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "silu": lambda v: v / (1 + np.exp(-v)),
    "tanh": np.tanh,
    "erf": erf,
    "hard_swish": lambda v: v * np.clip(v / 6 + 0.5, 0, 1),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(device, op):
    x = random((3, 4, 5), 12, -8, 8)
    g = porta.Graph()
    g.output("y", getattr(g, op)(g.input("x", x.shape)))
    assert_close(run(device, g, x=x)["y"], UNARY[op](x.astype(np.float64)))


def test_math_in_its_domain(device):
    x, e = random((3, 4, 5), 13, 0.25, 4), random((5,), 14, -2, 2)
    g = porta.Graph()
    t = g.input("x", x.shape)
    g.output("sqrt", g.sqrt(t))
    g.output("reciprocal", g.reciprocal(t))
    g.output("pow", g.pow(t, g.input("e", e.shape)))
    g.output("hard_sigmoid", g.hard_sigmoid(t, alpha=-0.3, beta=0.9))
    out = run(device, g, x=x, e=e)
    assert_close(out["sqrt"], np.sqrt(x))
    assert_close(out["reciprocal"], 1 / x)
    assert_close(out["pow"], np.power(x, e))
    assert_close(out["hard_sigmoid"], np.clip(-0.3 * x + 0.9, 0, 1))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
def test_reduce(device, op):
    x = random((2, 3, 4, 5), 15)
    g = porta.Graph()
    t = g.input("x", x.shape)
    g.output("kept", g.reduce(t, op, axes=[1, -1]))
    g.output("dropped", g.reduce(t, op, axes=[0], keepdims=False))
    g.output("all", g.reduce(t, op))
    out = run(device, g, x=x)
    fn = getattr(np, op)
    assert_close(out["kept"], fn(x, axis=(1, 3), keepdims=True))
    assert_close(out["dropped"], fn(x, axis=0))
    assert_close(out["all"], fn(x).reshape(1, 1, 1, 1))


def test_layer_and_rms_norm(device):
    x, s, b = random((2, 3, 16), 16), random((16,), 17), random((16,), 18)
    g = porta.Graph()
    t = g.input("x", x.shape)
    g.output("ln", g.layer_norm(t, g.constant("s", s), g.constant("b", b), epsilon=1e-3))
    g.output("rms", g.rms_norm(t, g.constant("s2", s)))
    out = run(device, g, x=x)
    xd = x.astype(np.float64)
    centred = xd - xd.mean(axis=-1, keepdims=True)
    assert_close(out["ln"], centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-3) * s + b)
    assert_close(out["rms"], xd / np.sqrt((xd**2).mean(axis=-1, keepdims=True) + 1e-5) * s)


def test_clip_and_gelu(device):
    x = random((4, 33), 13, -4, 4).astype(np.float64)
    g = porta.Graph()
    t = g.input("x", x.shape)
    g.output("clip", g.clip(t, -0.5, 1.5))
    g.output("gelu", g.gelu(t))
    g.output("gelu_tanh", g.gelu(t, tanh_approximation=True))
    out = run(device, g, x=x.astype(np.float32))
    assert_close(out["clip"], np.clip(x, -0.5, 1.5))
    assert_close(out["gelu"], 0.5 * x * (1 + erf(x / math.sqrt(2))))
    assert_close(out["gelu_tanh"], 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))))


@pytest.mark.parametrize("op,fn", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)])
def test_binary_broadcast(device, op, fn):
    a, b = random((2, 3, 4), 14), random((3, 1), 15, 0.5, 2)
    g = porta.Graph()
    g.output("y", getattr(g, op)(g.input("a", a.shape), g.input("b", b.shape)))
    assert_close(run(device, g, a=a, b=b)["y"], fn(a, b))


def test_batchnorm_softmax(device):
    x = random((2, 3, 4, 5), 16)
    scale, bias, mean, var = random((3,), 17), random((3,), 18), random((3,), 19), random((3,), 20, 0.5, 2)
    g = porta.Graph()
    t = g.input("x", x.shape)
    consts = [g.constant(n, v) for n, v in [("s", scale), ("b", bias), ("m", mean), ("v", var)]]
    g.output("bn", g.batchnorm(t, *consts, epsilon=1e-3))
    g.output("softmax", g.softmax(t, axis=1))
    mask = np.array([0, -1e4, 0, 0, -1e4], np.float32)
    g.output("masked", g.softmax(t, mask=g.constant("mask", mask)))
    out = run(device, g, x=x)
    c = lambda v: v.reshape(1, 3, 1, 1)  # noqa: E731
    assert_close(out["bn"], c(scale) * (x - c(mean)) / np.sqrt(c(var) + 1e-3) + c(bias))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert_close(out["softmax"], e / e.sum(axis=1, keepdims=True))
    e = np.exp(x + mask - (x + mask).max(axis=-1, keepdims=True))
    assert_close(out["masked"], e / e.sum(axis=-1, keepdims=True))


def test_pools(device):
    x = random((2, 3, 8, 8), 21)
    g = porta.Graph()
    t = g.input("x", x.shape)
    g.output("max", g.max_pool2d(t, kernel=(2, 2), stride=(2, 2)))
    g.output("avg", g.avg_pool2d(t, kernel=(3, 3), stride=(1, 1), pad=(1, 1, 1, 1), count_include_pad=True))
    g.output("gap", g.global_avg_pool(t))
    out = run(device, g, x=x)
    assert_close(out["max"], x.reshape(2, 3, 4, 2, 4, 2).max(axis=(3, 5)))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = sum(padded[:, :, i:i + 8, j:j + 8] for i in range(3) for j in range(3)) / 9
    assert_close(out["avg"], want)
    assert_close(out["gap"], x.mean(axis=(2, 3), keepdims=True))


def test_shape_ops_and_cast(device):
    x, y = random((2, 3, 4), 22), random((2, 5, 4), 23)
    g = porta.Graph()
    tx, ty = g.input("x", x.shape), g.input("y", y.shape)
    g.output("reshape", g.reshape(tx, (0, -1)))
    g.output("flatten", g.flatten(tx, axis=2))
    g.output("transpose", g.transpose(tx, (2, 0, 1)))
    g.output("concat", g.concat([tx, ty], axis=1))
    g.output("f16", g.cast(tx, "f16"))
    out = run(device, g, x=x, y=y)
    assert_close(out["reshape"], x.reshape(2, 12))
    assert_close(out["flatten"], x.reshape(6, 4))
    assert_close(out["transpose"], x.transpose(2, 0, 1))
    assert_close(out["concat"], np.concatenate([x, y], axis=1))
    assert out["f16"].dtype == np.float16
    assert np.array_equal(out["f16"], x.astype(np.float16))


def test_slice_split_pad_expand_match_numpy(device):
    x = random((3, 4, 5), 24)
    g = porta.Graph()
    tx = g.input("x", x.shape)
    g.output("slice", g.slice(tx, (-1, 1), (-100, 100), axes=(1, 2), steps=(-2, 2)))
    pieces = g.split(tx, -1, (2, 3))
    g.output("split", pieces[1])
    g.output("constant", g.pad(tx, (0, 1, 2, 1, 0, 0), value=1.5))
    g.output("reflect", g.pad(tx, (2, 0, 4, 1, 3, 0), "reflect"))
    g.output("edge", g.pad(tx, (1, 0, 0, 0, 2, 6), "edge"))
    g.output("expand", g.expand(g.slice(tx, (0,), (1,), axes=(1,)), (2, 3, 6, 5)))
    out = run(device, g, x=x)
    assert_close(out["slice"], x[:, -1::-2, 1::2])
    assert_close(out["split"], np.split(x, [2], axis=-1)[1])
    assert_close(out["constant"], np.pad(x, ((0, 1), (1, 0), (2, 0)), constant_values=1.5))
    assert_close(out["reflect"], np.pad(x, ((2, 1), (0, 3), (4, 0)), mode="reflect"))
    assert_close(out["edge"], np.pad(x, ((1, 0), (0, 2), (0, 6)), mode="edge"))
    assert_close(out["expand"], np.broadcast_to(x[:, 0:1], (2, 3, 6, 5)))


def test_gather_compare_where_with_int64_and_bool_arrays(device):
    x = random((5, 3), 25)
    ids = np.array([[4, -1], [0, 2]], dtype=np.int64)
    g = porta.Graph()
    tx, tids = g.input("x", x.shape), g.input("ids", ids.shape, "i64")
    rows = g.gather(tx, tids, 0)
    g.output("rows", rows)
    positive = g.greater(rows, g.constant("zero", np.zeros(1, np.float32)))
    g.output("positive", positive)
    g.output("either", g.logical_or(positive, g.logical_not(positive)))
    g.output("relu", g.where(positive, rows, g.constant("fill", np.zeros(1, np.float32))))
    g.output("ids_i32", g.cast(tids, "i32"))
    g.output("ids_equal", g.equal(tids, g.transpose(tids, (1, 0))))
    out = run(device, g, x=x, ids=ids)
    want = x[ids]
    assert_close(out["rows"], want)
    assert out["positive"].dtype == np.bool_
    assert np.array_equal(out["positive"], want > 0)
    assert out["either"].all()
    assert_close(out["relu"], np.maximum(want, 0))
    assert out["ids_i32"].dtype == np.int32 and np.array_equal(out["ids_i32"], ids)
    assert np.array_equal(out["ids_equal"], ids == ids.T)


def test_attention(device):
    rng = np.random.default_rng(5)
    q, k, v = (rng.uniform(-1, 1, (2, 3, s, 4)).astype(np.float32) for s in (5, 7, 7))
    mask = np.where(np.arange(7) % 3 == 2, -1e4, 0).astype(np.float32)
    g = porta.Graph()
    tq, tk, tv = g.input("q", q.shape), g.input("k", k.shape), g.input("v", v.shape)
    g.output("y", g.attention(tq, tk, tv, mask=g.constant("mask", mask)))
    g.output("causal", g.attention(tq, tk, tv, causal=True, scale=0.3))
    out = run(device, g, q=q, k=k, v=v)

    def expected(scores, hidden):
        scores = np.where(hidden, -np.inf, scores)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v

    qk = q @ k.transpose(0, 1, 3, 2)
    assert_close(out["y"], expected(qk / 2 + mask, np.zeros((5, 7), bool)))
    assert_close(out["causal"], expected(qk * 0.3, np.arange(7)[None, :] > np.arange(5)[:, None]))


def test_every_builder_op_is_bound():
    ops = ["matmul", "gemm", "conv2d", "add", "sub", "mul", "div", "relu", "relu6", "clip", "sigmoid", "silu", "tanh",
           "gelu", "erf", "sqrt", "reciprocal", "hard_sigmoid", "hard_swish", "pow", "reduce", "layer_norm", "rms_norm",
           "batchnorm", "max_pool2d", "avg_pool2d", "global_avg_pool", "softmax", "reshape", "flatten", "transpose",
           "concat", "cast", "slice", "split", "pad", "expand", "gather", "equal", "less", "less_or_equal", "greater",
           "greater_or_equal", "logical_not", "logical_and", "logical_or", "where",
           "attention"]
    assert [op for op in ops if not callable(getattr(porta.Graph, op, None))] == []
