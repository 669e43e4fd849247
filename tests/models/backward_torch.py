#!/usr/bin/env python3
"""porta-run --backward against PyTorch autograd: a small MLP (Linear, BatchNorm1d in eval mode,
Tanh, Linear, Sigmoid and Softmax outputs) exported to ONNX; the gradient of sum(y * seed) over
both outputs with respect to the input and every parameter, on each device, is compared with
torch's. Exit 77 (skipped) without torch, onnx or numpy."""
import argparse
import os
import subprocess
import sys

SKIP = 77
# f32 on both sides, a few hundred terms per sum: errors near 1e-7; a wrong rule gives errors near 1.
TOLERANCE = 1e-5


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
    model = Mlp().eval()
    with torch.no_grad():  # statistics other than the defaults, so that the batchnorm does something
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    return model


def relative_error(np, got, want):
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--porta-run", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--devices", default="ref,cpu")
    args = parser.parse_args()
    try:
        import numpy as np
        import onnx  # noqa: F401  (torch.onnx.export needs it)
        import torch
    except ImportError as e:
        print(f"SKIPPED: {e}; install python3-torch python3-onnx (scripts/setup)")
        return SKIP

    os.makedirs(args.work_dir, exist_ok=True)
    model = build(torch)
    x = torch.rand(5, 6) * 2 - 1
    path = os.path.join(args.work_dir, "mlp.onnx")
    torch.onnx.export(model, x, path, input_names=["x"], output_names=["p", "s"], opset_version=13)
    rng = np.random.default_rng(1)
    seeds = {name: rng.uniform(-1, 1, (5, 4)).astype(np.float32) for name in ("p", "s")}
    files = {"x": x.numpy()} | {f"seed_{name}": seed for name, seed in seeds.items()}
    for name, array in files.items():
        np.save(os.path.join(args.work_dir, f"{name}.npy"), array)

    x.requires_grad_(True)
    p, s = model(x)
    ((p * torch.from_numpy(seeds["p"])).sum() + (s * torch.from_numpy(seeds["s"])).sum()).backward()
    want = {"x": x.grad.numpy()} | {n: t.grad.numpy() for n, t in model.named_parameters()}

    failures = 0
    for device in args.devices.split(","):
        out = os.path.join(args.work_dir, device.replace(":", "_"))
        run = subprocess.run([args.porta_run, path, "--device", device, "--iterations", "0", "--backward",
                              "--input", f"x={args.work_dir}/x.npy", "--output-grad", f"p={args.work_dir}/seed_p.npy",
                              "--output-grad", f"s={args.work_dir}/seed_s.npy", "--output-dir", out],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {device}: porta-run exit {run.returncode}: {run.stderr.strip()}")
            failures += 1
            continue
        for name, grad in want.items():
            file = os.path.join(out, f"{name}.grad.npy")
            if not os.path.exists(file):
                print(f"FAIL {device}: no {file}")
                failures += 1
                continue
            error = relative_error(np, np.load(file), grad)
            good = error < TOLERANCE
            failures += not good
            print(f"{'ok' if good else 'FAIL'} {device} d/d{name}: relative L2 error {error:.2e}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
