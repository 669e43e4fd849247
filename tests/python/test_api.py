"""Arrays in and out (dtypes, layouts, conversions), errors, threads, devices and the model catalog."""
import threading

import numpy as np
import pytest
from conftest import assert_close, random

import porta


def relu_graph(shape=(4, 6), dtype="f32"):
    g = porta.Graph()
    g.output("y", g.relu(g.input("x", shape, dtype)))
    return g


def test_issue_example_shape():
    g = porta.Graph()
    x = g.input("x", (8, 64), "f32")
    w = np.random.default_rng(0).random((64, 32)).astype(np.float32)
    g.output("y", g.relu(g.matmul(x, g.constant("w", w))))
    y = porta.Device("cpu").compile(g).run(x=np.ones((8, 64), np.float32))["y"]
    assert y.shape == (8, 32) and y.dtype == np.float32
    assert_close(y, np.maximum(np.ones((8, 64)) @ w, 0))
    assert g.shape(x) == (8, 64) and g.dtype(x) == "f32" and g.inputs == ["x"] and g.outputs == ["y"]


def test_non_contiguous_inputs_are_copied_contiguous():
    x = random((6, 4), 1)
    exe = porta.Device("cpu").compile(relu_graph())
    assert_close(exe.run(x=x.T)["y"], np.maximum(x.T, 0))          # transposed view
    wide = random((4, 12), 2)
    assert_close(exe.run(x=wide[:, ::2])["y"], np.maximum(wide[:, ::2], 0))  # strided slice


def test_float64_is_converted_and_integers_are_refused():
    exe = porta.Device("cpu").compile(relu_graph())
    x = np.linspace(-1, 1, 24).reshape(4, 6)
    assert_close(exe.run(x=x)["y"], np.maximum(x, 0))
    with pytest.raises(porta.Error) as e:
        exe.run(x=np.ones((4, 6), np.int32))
    assert e.value.code == porta.ErrorCode.DTypeMismatch and "int32" in e.value.message


def test_f16_in_and_out():
    x = random((4, 6), 3).astype(np.float16)
    y = porta.Device("cpu").compile(relu_graph(dtype="f16")).run(x=x)["y"]
    assert y.dtype == np.float16 and np.array_equal(y, np.maximum(x, 0))


def test_bf16_convention():
    x = random((4, 6), 4)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)  # bf16 by truncation: exact in bf16
    exact = (bits.astype(np.uint32) << 16).view(np.float32)
    y = porta.Device("cpu").compile(relu_graph(dtype="bf16")).run(x=bits)["y"]
    try:
        import ml_dtypes
        assert y.dtype == ml_dtypes.bfloat16
        y = y.astype(np.float32)
    except ImportError:
        assert y.dtype == np.uint16
        y = (y.astype(np.uint32) << 16).view(np.float32)
    assert np.array_equal(y, np.maximum(exact, 0))


def test_constant_dtypes():
    g = porta.Graph()
    assert g.dtype(g.constant("a", np.ones((2,), np.float16))) == "f16"
    assert g.dtype(g.constant("b", np.ones((2,), np.float64))) == "f32"
    assert g.dtype(g.constant("c", np.ones((2,), np.uint16), dtype="bf16")) == "bf16"
    assert g.dtype(g.constant("d", np.ones((2,), np.int64))) == "i64"
    assert g.dtype(g.constant("e", np.ones((2,), np.bool_))) == "bool"
    assert g.dtype(g.constant("f", np.ones((2,), np.float32), dtype="i32")) == "i32"
    with pytest.raises(porta.Error) as e:
        g.constant("g", np.ones((2,), np.uint8))
    assert e.value.code == porta.ErrorCode.DTypeMismatch


def test_errors_carry_code_and_message():
    g = porta.Graph()
    a, b = g.input("a", (2, 3)), g.input("b", (4, 5))
    with pytest.raises(porta.Error) as e:
        g.matmul(a, b)
    assert e.value.code == porta.ErrorCode.ShapeMismatch and "matmul" in str(e.value)
    with pytest.raises(porta.Error) as e:
        g.input("c", (2,), "f64")
    assert e.value.code == porta.ErrorCode.InvalidArgument and "f64" in e.value.message
    with pytest.raises(porta.Error) as e:
        g.gemm(a, a, activation="swish")
    assert e.value.code == porta.ErrorCode.InvalidArgument
    for spec, code in [("nosuch", porta.ErrorCode.NotFound), ("cpu:threads=x", porta.ErrorCode.InvalidArgument)]:
        with pytest.raises(porta.Error) as e:
            porta.Device(spec)
        assert e.value.code == code and spec in e.value.message
    exe = porta.Device("cpu").compile(relu_graph())
    with pytest.raises(porta.Error) as e:
        exe.run(x=np.ones((6, 4), np.float32))
    assert e.value.code == porta.ErrorCode.ShapeMismatch and "[4, 6]" in e.value.message
    with pytest.raises(porta.Error) as e:
        exe.run(z=np.ones((4, 6), np.float32))
    assert e.value.code == porta.ErrorCode.NotFound
    with pytest.raises(porta.Error):
        exe.run(x="not an array")
    assert issubclass(porta.Error, Exception)


def test_two_threads_run_at_once():
    graphs = []
    for seed in (5, 6):
        g = porta.Graph()
        w = random((96, 96), seed)
        g.output("y", g.matmul(g.input("x", (64, 96)), g.constant("w", w)))
        graphs.append((g, w))
    results, errors = {}, []

    def work(i):
        try:
            g, w = graphs[i]
            exe = porta.Device("cpu").compile(g)
            for k in range(20):
                x = random((64, 96), 100 * i + k)
                assert_close(exe.run(x=x)["y"], x @ w)
            results[i] = True
        except Exception as e:  # noqa: BLE001: reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == {0: True, 1: True}


def test_devices_and_measurements():
    infos = porta.devices()
    assert any(d.backend == "cpu" for d in infos)
    cpu = porta.Device("cpu:threads=1")
    assert cpu.info.threads == 1 and cpu.info.spec.startswith("cpu")
    exe = cpu.compile(relu_graph(), profile=True)
    exe.run(x=np.ones((4, 6), np.float32))
    seconds, clock = exe.last_run_time
    assert seconds >= 0 and clock == "host"
    assert exe.planned_peak_bytes >= 96 and exe.device.spec == cpu.info.spec
    assert [t[1] for t in exe.node_timings()] == ["relu"]
    assert exe.node_plans() == [(exe.node_timings()[0][0], "relu", "")]  # an elementwise op makes no plan
    gemm = porta.Graph()
    gemm.output("y", gemm.matmul(gemm.input("a", [32, 48]), gemm.input("b", [48, 40])))
    exe = cpu.compile(gemm)
    assert exe.node_plans() == []  # recorded on the first run
    exe.run(a=np.ones((32, 48), np.float32), b=np.ones((48, 40), np.float32))
    [(_, op, plan)] = exe.node_plans()
    assert op == "matmul" and plan.startswith("gemm ") and "threads=1" in plan
    assert cpu.measure_fma_gflops() > 0


def test_models_build_and_estimate():
    assert "efficientnet-b0" in porta.models.available()
    g = porta.models.build("efficientnet-b0", batch=8)
    assert g.inputs == ["input"] and g.outputs == ["logits"]
    memory = porta.Device("cpu").estimate_memory(g)
    assert memory["constant_bytes"] > 4_000_000 and memory["peak_bytes"] > memory["arena_bytes"]
    small = porta.models.build("resnet50", batch=1, resolution=32, classes=10)
    y = porta.Device("cpu").compile(small).run(input=random((1, 3, 32, 32), 7))["logits"]
    assert y.shape == (1, 10) and np.isfinite(y).all()
    with pytest.raises(porta.Error) as e:
        porta.models.build("resnet5")
    assert e.value.code == porta.ErrorCode.NotFound


def test_variables_stay_on_the_device_and_are_read_and_set_from_python():
    g = porta.Graph()
    total = g.variable("total", np.array([1.0, 2.0, 3.0], np.float32))
    g.assign(total, g.add(total, g.input("x", (3,), "f32")))
    assert g.variables == ["total"]
    exe = porta.Device("cpu").compile(g)
    assert exe.variables == ["total"]
    for _ in range(2):
        exe.run(x=np.array([1.0, 0.5, -1.0], np.float32))
    assert_close(exe.variable("total"), np.array([3.0, 3.0, 1.0]))
    exe.set_variable("total", np.zeros(3))  # float64 is converted
    exe.run(x=np.ones(3, np.float32))
    assert_close(exe.variable("total"), np.ones(3))
    with pytest.raises(porta.Error, match="no variable named 'nope'"):
        exe.variable("nope")
    with pytest.raises(porta.Error, match=r"variable 'total' is \[3\]"):
        exe.set_variable("total", np.zeros(4))
