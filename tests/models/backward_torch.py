#!/usr/bin/env python3
"""porta-run --backward against PyTorch autograd: a small MLP (Linear, BatchNorm1d in eval mode,
Tanh, Linear, Sigmoid and Softmax outputs) or a whole torchvision network in eval mode (--model
resnet50, efficientnet_b0, ... at --size x --size, --batch images) exported to ONNX; the gradient of
sum(y * seed) over the outputs with respect to the input and every parameter, on each device, is
compared with torch's. Exit 77 (skipped) without torch, onnx or numpy (or torchvision for a network)."""
import argparse
import os
import subprocess
import sys

SKIP = 77
# The relative L2 error allowed. The MLP: f32 on both sides, a few hundred terms per sum, errors near
# 1e-7; a wrong rule gives errors near 1. A whole network: a normalised squared error (NMSE) under
# 1e-6 for every gradient, the square of this.
TOLERANCE = {"mlp": 1e-5}
NETWORK_TOLERANCE = 1e-3


def build(torch):
    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(6, 10)
            self.bn = torch.nn.BatchNorm1d(10)
            self.fc2 = torch.nn.Linear(10, 4)

        def forward(self, x):
            h = self.fc2(torch.tanh(self.bn(self.fc1(x))))
            return torch.softmax(h, dim=1), torch.sigmoid(h)

    torch.manual_seed(0)
    return randomise_statistics(torch, Mlp().eval())


def randomise_statistics(torch, model):
    """Running statistics other than the defaults, so that each batchnorm does something."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return model


def network(torch, name, batch, size):
    """A torchvision network in eval mode (its dropout and stochastic depth off), its input, and the
    export options that keep each batchnorm and its parameters' names (the eval peephole would fold
    batchnorms into the convolutions)."""
    import torchvision
    torch.manual_seed(0)
    model = randomise_statistics(torch, getattr(torchvision.models, name)(weights=None).eval())
    return model, torch.rand(batch, 3, size, size) * 2 - 1, {"training": torch.onnx.TrainingMode.PRESERVE,
                                                             "do_constant_folding": False}


def relative_error(np, got, want):
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--porta-run", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--devices", default="ref,cpu")
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()
    try:
        import numpy as np
        import onnx  # noqa: F401  (torch.onnx.export needs it)
        import torch
        if args.model != "mlp":
            import torchvision  # noqa: F401
    except ImportError as e:
        print(f"SKIPPED: {e}; install python3-torch python3-torchvision python3-onnx (scripts/setup)")
        return SKIP

    os.makedirs(args.work_dir, exist_ok=True)
    if args.model == "mlp":
        model, x, options = build(torch), torch.rand(5, 6) * 2 - 1, {}
    else:
        model, x, options = network(torch, args.model, args.batch, args.size)
    outputs = model(x)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    names = ["p", "s"][:len(outputs)]
    path = os.path.join(args.work_dir, f"{args.model}.onnx")
    torch.onnx.export(model, x, path, input_names=["x"], output_names=names, opset_version=13, **options)
    rng = np.random.default_rng(1)
    seeds = {name: rng.uniform(-1, 1, tuple(y.shape)).astype(np.float32) for name, y in zip(names, outputs)}
    files = {"x": x.numpy()} | {f"seed_{name}": seed for name, seed in seeds.items()}
    for name, array in files.items():
        np.save(os.path.join(args.work_dir, f"{name}.npy"), array)

    x.requires_grad_(True)
    outputs = model(x)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    sum((y * torch.from_numpy(seeds[name])).sum() for name, y in zip(names, outputs)).backward()
    want = {"x": x.grad.numpy()} | {n: t.grad.numpy() for n, t in model.named_parameters()}
    tolerance = TOLERANCE.get(args.model, NETWORK_TOLERANCE)

    failures = 0
    for device in args.devices.split(","):
        out = os.path.join(args.work_dir, device.replace(":", "_"))
        seed_options = [o for name in names for o in ("--output-grad", f"{name}={args.work_dir}/seed_{name}.npy")]
        run = subprocess.run([args.porta_run, path, "--device", device, "--iterations", "0", "--backward",
                              "--input", f"x={args.work_dir}/x.npy", *seed_options, "--output-dir", out],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {device}: porta-run exit {run.returncode}: {run.stderr.strip()}")
            failures += 1
            continue
        worst = 0.0
        for name, grad in want.items():
            file = os.path.join(out, f"{name}.grad.npy")
            if not os.path.exists(file):
                print(f"FAIL {device}: no {file}")
                failures += 1
                continue
            error = relative_error(np, np.load(file), grad)
            good = error < tolerance
            failures += not good
            worst = max(worst, error)
            if not good or args.model == "mlp":
                print(f"{'ok' if good else 'FAIL'} {device} d/d{name}: relative L2 error {error:.2e}")
        print(f"{device}: {len(want)} gradients of {args.model}, largest relative L2 error {worst:.2e} "
              f"(NMSE {worst * worst:.1e})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
