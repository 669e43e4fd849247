#!/usr/bin/env python3
"""Exports torchvision networks (random weights, eval mode) to ONNX, runs them with porta-run on
each device and compares the outputs with torch's. Exit 77 (skipped) without torch, torchvision,
onnx or numpy."""
import argparse
import os
import subprocess
import sys
import time

SKIP = 77

# f32 with a different summation order: each output sums ~10^3-10^4 products per layer, so rounding
# gives ~1e-6 relative error per layer, which depth grows to ~1e-5 over 50 layers. 1e-4 leaves a
# 10x margin and still catches any wrong weight, padding or layout (those give errors near 1).
TOLERANCE = 1e-4


def check_bad_inputs(np, args, model_path, name):
    """porta-run must reject a wrong shape, another dtype and Fortran order with a clear message."""
    cases = {
        "shape": (np.zeros((1, 3, 32, 32), np.float32), "does not match input 'input'"),
        "dtype": (np.zeros((1, 3, 224, 224), np.float64), "'<f8' is not supported"),
        "fortran": (np.asfortranarray(np.zeros((1, 3, 224, 224), np.float32)), "Fortran order"),
    }
    failures = 0
    for case, (array, message) in cases.items():
        path = os.path.join(args.work_dir, f"{name}.bad_{case}.npy")
        np.save(path, array)
        run = subprocess.run([args.porta_run, model_path, "--input", f"input={path}", "--iterations", "0"],
                             capture_output=True, text=True)
        good = run.returncode == 1 and message in run.stderr and "Traceback" not in run.stderr
        failures += not good
        print(f"{'ok' if good else 'FAIL'} porta-run rejects a bad input ({case}): exit {run.returncode}: {run.stderr.strip()}")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--porta-run", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--devices", default="cpu")
    parser.add_argument("--models", default="resnet50,efficientnet_b0")
    parser.add_argument("--opset", type=int, default=13)
    args = parser.parse_args()

    try:
        import numpy as np
        import onnx  # noqa: F401  (torch.onnx.export needs it)
        import torch
        import torchvision
    except ImportError as e:
        print(f"SKIPPED: {e}; install python3-torch python3-torchvision python3-onnx (scripts/setup)")
        return SKIP

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    os.makedirs(args.work_dir, exist_ok=True)
    failures = 0
    for name in args.models.split(","):
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            expected = model(x).numpy()
        path = os.path.join(args.work_dir, f"{name}.onnx")
        start = time.time()
        torch.onnx.export(model, x, path, opset_version=args.opset, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        print(f"{name}: exported with opset {args.opset} in {time.time() - start:.1f} s")
        x_path = os.path.join(args.work_dir, f"{name}.input.npy")
        np.save(x_path, x.numpy())
        failures += check_bad_inputs(np, args, path, name) if name == args.models.split(",")[0] else 0

        for device in args.devices.split(","):
            out_dir = os.path.join(args.work_dir, f"{name}.{device.replace(':', '_')}")
            command = [args.porta_run, path, "--device", device, "--input", f"input={x_path}",
                       "--output-dir", out_dir, "--iterations", "2"]
            start = time.time()
            run = subprocess.run(command, capture_output=True, text=True)
            print(run.stdout, end="")
            if run.returncode != 0:
                print(f"FAIL {name} on {device}: porta-run exited {run.returncode}: {run.stderr.strip()}")
                failures += 1
                continue
            got = np.load(os.path.join(out_dir, "output.npy"))
            if got.shape != expected.shape:
                print(f"FAIL {name} on {device}: output shape {got.shape}, torch's is {expected.shape}")
                failures += 1
                continue
            diff = got.astype(np.float64) - expected.astype(np.float64)
            rel_l2 = float(np.linalg.norm(diff) / np.linalg.norm(expected.astype(np.float64)))
            max_abs = float(np.abs(diff).max())
            same_top1 = int(got.argmax()) == int(expected.argmax())
            verdict = "ok" if rel_l2 <= TOLERANCE and same_top1 else "FAIL"
            failures += verdict != "ok"
            print(f"{verdict} {name} on {device}: relative L2 error {rel_l2:.2e} (tolerance {TOLERANCE:.0e}), "
                  f"max abs error {max_abs:.2e} of max |torch| {float(np.abs(expected).max()):.2e}, "
                  f"top-1 {'agrees' if same_top1 else 'differs'}; porta-run took {time.time() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
