"""porta.autodiff from Python: gradients against numpy's, a classifier trained to high accuracy, checkpoints
through Executable.variable / set_variable, dropout's steps, and bad arguments."""
import numpy as np
import pytest
from conftest import assert_close, random

import porta
from porta import autodiff


def test_gradients_of_a_squared_error_match_numpy(device):
    x, w, t = random((5, 3), 1), random((3, 4), 2), random((5, 4), 3)
    g = porta.Graph()
    xi, ti = g.input("x", x.shape), g.input("t", t.shape)
    wc = g.constant("w", w)
    loss = autodiff.mean_squared_error(g, g.matmul(xi, wc), ti)
    dw, dx = autodiff.gradients(g, loss, [wc, xi])
    g.output("loss", loss)
    g.output("dw", dw)
    g.output("dx", dx)
    out = device.compile(g).run(x=x, t=t)
    r = x.astype(np.float64) @ w - t
    assert_close(out["loss"], [np.mean(r * r)])
    assert_close(out["dw"], 2 * x.T @ r / r.size)
    assert_close(out["dx"], 2 * r @ w.T / r.size)


def blobs(count, seed):
    """Four classes of points around four centres in 8 dimensions: learnable by a small network."""
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(99).normal(0, 2, (4, 8))
    labels = rng.integers(0, 4, count)
    return (centres[labels] + rng.normal(0, 0.7, (count, 8))).astype(np.float32), labels.astype(np.int64)


def classifier_step(batch, optimizer="sgd", precision="f32"):
    """An mlp 8 -> 32 -> 4 made trainable; each run is one optimiser step on a batch, its loss an output.
    In f16 the gradients are loss-scaled and a step that overflows is skipped."""
    net = porta.Graph()
    x = net.input("x", (batch, 8))
    w1 = net.constant("w1", random((32, 8), 4, -0.3, 0.3))
    w2 = net.constant("w2", random((4, 32), 5, -0.3, 0.3))
    net.output("logits", net.gemm(net.tanh(net.gemm(x, w1, trans_b=True)), w2, trans_b=True))
    g, params = autodiff.training_graph(net, precision=precision)
    loss = autodiff.softmax_cross_entropy(g, g.output_tensor("logits"), g.input("labels", (batch,), "i64"))
    g.output("loss", loss)
    finite = None
    if precision == "f16":
        grads, finite, _ = autodiff.scaled_gradients(g, loss, params, initial_scale=1024.0)
    else:
        grads = autodiff.gradients(g, loss, params)
    if optimizer == "sgd":
        autodiff.apply_sgd(g, params, grads, learning_rate=0.1, momentum=0.9, apply_if=finite)
    else:
        autodiff.apply_adamw(g, params, grads, learning_rate=0.02, apply_if=finite)
    return g, params


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_a_classifier_trains_to_high_accuracy(device, optimizer):
    g, params = classifier_step(32, optimizer)
    state = {"sgd": ["w1.velocity", "w2.velocity"], "adamw": ["w1.m", "w1.v", "w2.m", "w2.v", "adamw.step"]}
    assert sorted(g.variables) == sorted(["w1", "w2"] + state[optimizer])
    exe = device.compile(g)
    x, labels = blobs(32 * 20, 1)
    losses = [float(exe.run(x=x[i:i + 32], labels=labels[i:i + 32])["loss"][0]) for i in range(0, len(x), 32)]
    assert losses[-1] < 0.3 * losses[0]
    w1, w2 = exe.variable("w1"), exe.variable("w2")
    test_x, test_labels = blobs(1000, 2)
    predicted = np.argmax(np.tanh(test_x @ w1.T) @ w2.T, axis=1)
    assert np.mean(predicted == test_labels) >= 0.95


@pytest.mark.parametrize("precision", ["bf16", "f16"])
def test_mixed_precision_trains_to_high_accuracy_around_f32_params(device, precision):
    g, _ = classifier_step(32, "sgd", precision)
    exe = device.compile(g)
    x, labels = blobs(32 * 20, 1)
    losses = [float(exe.run(x=x[i:i + 32], labels=labels[i:i + 32])["loss"][0]) for i in range(0, len(x), 32)]
    assert losses[-1] < 0.3 * losses[0]
    w1, w2 = exe.variable("w1"), exe.variable("w2")
    assert w1.dtype == np.float32 and w2.dtype == np.float32
    if precision == "f16":
        assert exe.variable("loss_scale")[0] == 1024.0  # no overflow, fewer than 2000 good steps
    test_x, test_labels = blobs(1000, 2)
    predicted = np.argmax(np.tanh(test_x @ w1.T) @ w2.T, axis=1)
    assert np.mean(predicted == test_labels) >= 0.95


def test_a_checkpoint_resumes_bit_identically():
    x, labels = blobs(32 * 6, 3)
    batches = [dict(x=x[i:i + 32], labels=labels[i:i + 32]) for i in range(0, len(x), 32)]
    g, _ = classifier_step(32)
    device = porta.Device("cpu")
    straight = device.compile(g)
    for b in batches:
        straight.run(**b)
    first = device.compile(g)
    for b in batches[:3]:
        first.run(**b)
    saved = {name: first.variable(name) for name in first.variables}
    resumed = device.compile(g)
    for name, value in saved.items():
        resumed.set_variable(name, value)
    for b in batches[3:]:
        resumed.run(**b)
    for name in straight.variables:
        assert np.array_equal(resumed.variable(name), straight.variable(name)), name


def test_dropout_draws_a_new_mask_each_run_and_keeps_its_scale():
    g = porta.Graph()
    x = g.input("x", (4096,))
    g.output("y", g.dropout(x, autodiff.step_counter(g), ratio=0.25, seed=7))
    exe = porta.Device("cpu").compile(g)
    ones = np.ones(4096, np.float32)
    first, second = exe.run(x=ones)["y"].copy(), exe.run(x=ones)["y"]
    for y in (first, second):
        assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
        assert abs(np.mean(y == 0) - 0.25) < 0.03
    assert not np.array_equal(first, second)
    assert exe.variable("dropout.step")[0] == 2


def test_dropout_over_leading_dims_keeps_or_drops_whole_samples():
    g = porta.Graph()
    x = g.input("x", (512, 3, 5))
    g.output("y", g.dropout(x, autodiff.step_counter(g), ratio=0.5, seed=3, mask_dims=1))
    y = porta.Device("cpu").compile(g).run(x=np.ones((512, 3, 5), np.float32))["y"]
    per_sample = y.reshape(512, -1)
    assert (per_sample == per_sample[:, :1]).all()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert abs(np.mean(per_sample[:, 0] == 0) - 0.5) < 0.1
    with pytest.raises(porta.Error) as e:
        g.dropout(x, autodiff.step_counter(g, "other"), mask_dims=4)
    assert e.value.code == porta.ErrorCode.InvalidArgument


def test_dropout_shards_draw_the_whole_batchs_mask():
    def dropped(rows, batch_offset, mask_dims):
        g = porta.Graph()
        x = g.input("x", (rows, 3, 5))
        g.output("y", g.dropout(x, autodiff.step_counter(g), ratio=0.5, seed=3, mask_dims=mask_dims,
                                batch_offset=batch_offset))
        return porta.Device("cpu").compile(g).run(x=np.ones((rows, 3, 5), np.float32))["y"]
    for mask_dims in (-1, 0, 1, 2):
        whole = dropped(7, 0, mask_dims)
        assert np.array_equal(np.concatenate([dropped(3, 0, mask_dims), dropped(4, 3, mask_dims)]), whole)
    with pytest.raises(porta.Error) as e:
        dropped(4, -1, -1)
    assert e.value.code == porta.ErrorCode.InvalidArgument
    net = porta.Graph()
    net.output("y", net.dropout(net.input("x", (4, 2)), autodiff.step_counter(net), ratio=0.5))
    g, _ = autodiff.training_graph(net, batch_offset=4)
    y = porta.Device("cpu").compile(g).run(x=np.ones((4, 2), np.float32))["y"]
    assert np.array_equal(y, dropped_rows(8, 2)[4:])


def dropped_rows(rows, columns):
    g = porta.Graph()
    g.output("y", g.dropout(g.input("x", (rows, columns)), autodiff.step_counter(g), ratio=0.5))
    return porta.Device("cpu").compile(g).run(x=np.ones((rows, columns), np.float32))["y"]


def test_models_training_builds_have_dropout():
    for name in ("efficientnet-b0", "mobilenet-v2"):
        plain = porta.models.build(name, resolution=32)
        trained = porta.models.build(name, resolution=32, training=True)
        assert plain.variables == [] and trained.variables == ["dropout.step"]
        assert len(trained) > len(plain)
        assert trained.shape(trained.output_tensor("logits")) == plain.shape(plain.output_tensor("logits"))


def test_channels_last_training_gives_the_same_loss_and_gradients():
    """MobileNet-V2 at 64 px made trainable as built and channels-last: one graph, two layouts (at 32 px its
    last batchnorms normalise 2 values each, which amplifies the layouts' different rounding)."""
    net = porta.models.build("mobilenet-v2", batch=2, resolution=64, classes=4)
    x = random((2, 3, 64, 64), 6)
    runs = []
    for channels_last in (False, True):
        g, params = autodiff.training_graph(net, channels_last=channels_last)
        loss = autodiff.softmax_cross_entropy(g, g.output_tensor("logits"), g.input("labels", (2,), "i64"))
        g.output("loss", loss)
        for i, d in enumerate(autodiff.gradients(g, loss, params[:3])):
            g.output(f"grad{i}", d)
        runs.append(porta.Device("cpu").compile(g).run(input=x, labels=np.array([1, 3], np.int64)))
    for name in ("loss", "grad0", "grad1", "grad2"):
        assert_close(runs[1][name], runs[0][name])


def test_bad_arguments_are_errors():
    g = porta.Graph()
    x = g.input("x", (3,))
    indices = g.input("i", (3,), "i64")
    with pytest.raises(porta.Error) as e:
        autodiff.gradients(g, g.relu(x), [indices])
    assert e.value.code == porta.ErrorCode.InvalidArgument
    with pytest.raises(porta.Error) as e:
        g.dropout(x, autodiff.step_counter(g), ratio=1.0)
    assert e.value.code == porta.ErrorCode.InvalidArgument
    with pytest.raises(porta.Error) as e:
        g.output_tensor("nothing")
    assert e.value.code == porta.ErrorCode.NotFound
