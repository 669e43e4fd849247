#!/usr/bin/env python3
"""torchvision's classification models against torch, through ONNX: each model (random weights, eval
mode) is exported with a dynamic batch at the smallest input size it exports at, run by porta-run on
each device and compared with torch's output (NMSE below 1e-5). Each model ends as one line:

  ok        every device ran it and matched
  MISMATCH  a device ran it and its output differs (a failure)
  REFUSED   porta declines it (an op it does not import, or a device without the op), with the reason
  ERROR     porta-run failed otherwise (a failure)
  TIMEOUT   a device ran past --timeout (a failure: the model was not checked there)
  NOEXPORT  torch could not export it (e.g. a model past protobuf's 2 GB), with torch's reason

--size fixes the input size instead (e.g. 224, as users run them); --bad-inputs also checks that porta-run
refuses a wrong shape, dtype or memory order with a clear message. Exit 1 on a MISMATCH, an ERROR or a TIMEOUT,
on a REFUSED unless --refusals-ok, and on a bad input taken; 77 (skipped) without torch, torchvision, onnx or
numpy. --models all takes every model this torchvision lists. --json writes the
results, from which scripts/onnx-zoo-doc makes the table in docs/onnx.md."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

SKIP = 77
NMSE_LIMIT = 1e-5
SIZES = (32, 64, 96, 224)  # tried in turn: the first that torch runs and exports is the model's size


def constructor_kwargs(name, size):
    """Transformers fix their input size when built."""
    if name.startswith("vit_"):
        return {"image_size": size}
    if name.startswith("maxvit"):
        return {"input_size": (size, size)}
    return {}


def export(torch, torchvision, name, opset, batch, path, sizes):
    """Exports `name` at the first of `sizes` it runs and exports at: (size, input, torch's output, params)."""
    reason = ""
    for size in sizes:
        torch.manual_seed(0)
        try:
            model = torchvision.models.get_model(name, weights=None, **constructor_kwargs(name, size)).eval()
            x = torch.randn(batch, 3, size, size)
            with torch.no_grad():
                expected = model(x)
                other = model(torch.randn(batch, 3, size, size))
            torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                              dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        except Exception as e:  # noqa: BLE001 (torch raises many kinds for a size a model cannot take)
            reason = " ".join(str(e).split())[:300] or type(e).__name__
            if "2GB" in reason:
                break  # protobuf's limit: larger inputs do not help
            continue
        params = sum(p.numel() for p in model.parameters())
        # How much the output moves with the input: near 0, random weights made the check weak.
        sensitivity = float((expected - other).norm() / expected.norm().clamp_min(1e-30))
        return size, x.numpy(), expected.numpy(), params, sensitivity
    raise RuntimeError(reason)


def refusal_reason(stderr):
    """The reason in porta-run's 'error (unsupported)' line, or None for any other failure."""
    match = re.search(r"porta-run: error \(unsupported\): (.*)", stderr)
    return match.group(1).strip() if match else None


def run_device(np, args, name, model_path, x_path, expected, device):
    """{status, nmse | reason, seconds} of the model on one device."""
    out_dir = os.path.join(args.work_dir, f"{name}.{device.replace(':', '_')}")
    command = [args.porta_run, model_path, "--device", device, "--input", f"input={x_path}",
               "--batch", str(args.batch), "--output-dir", out_dir, "--iterations", "0"]
    start = time.time()
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"status": "TIMEOUT", "reason": f"porta-run took over {args.timeout} s", "seconds": args.timeout}
    seconds = round(time.time() - start, 1)
    if run.returncode != 0:
        reason = refusal_reason(run.stderr)
        if reason is not None:
            return {"status": "REFUSED", "reason": reason, "seconds": seconds}
        return {"status": "ERROR", "reason": f"exit {run.returncode}: {run.stderr.strip()[-500:]}", "seconds": seconds}
    got = np.load(os.path.join(out_dir, "output.npy")).astype(np.float64)
    want = expected.astype(np.float64)
    if got.shape != want.shape:
        return {"status": "MISMATCH", "reason": f"output shape {got.shape}, torch's {want.shape}", "seconds": seconds}
    nmse = float(np.sum((got - want) ** 2) / max(np.sum(want ** 2), 1e-300))
    return {"status": "ok" if nmse < NMSE_LIMIT else "MISMATCH", "nmse": nmse, "seconds": seconds}


def check_bad_inputs(np, args, model_path, size):
    """porta-run must refuse a wrong shape, another dtype and Fortran order with a clear message: the number
    of cases it did not."""
    good_shape = (1, 3, size, size)
    cases = {
        "shape": (np.zeros((1, 3, size + 1, size), np.float32), "does not match input 'input'"),
        "dtype": (np.zeros(good_shape, np.float64), "'<f8' is not supported"),
        "fortran": (np.asfortranarray(np.zeros(good_shape, np.float32)), "Fortran order"),
    }
    failures = 0
    for case, (array, message) in cases.items():
        path = os.path.join(args.work_dir, f"bad_{case}.npy")
        np.save(path, array)
        run = subprocess.run([args.porta_run, model_path, "--input", f"input={path}", "--iterations", "0"],
                             capture_output=True, text=True)
        good = run.returncode == 1 and message in run.stderr and "Traceback" not in run.stderr
        failures += not good
        print(f"{'ok' if good else 'FAIL'} porta-run refuses a bad input ({case}): exit {run.returncode}: "
              f"{run.stderr.strip()}")
    return failures


def overall(devices):
    """The model's status: the worst of its devices' (a failure before a refusal before ok)."""
    for status in ("ERROR", "MISMATCH", "TIMEOUT", "REFUSED"):
        if any(d["status"] == status for d in devices.values()):
            return status
    return "ok"


def check_model(np, torch, torchvision, args, name, opset):
    path = os.path.join(args.work_dir, f"{name}.onnx")
    result = {"model": name, "opset": opset}
    start = time.time()
    try:
        sizes = (args.size,) if args.size else SIZES
        size, x, expected, params, sensitivity = export(torch, torchvision, name, opset, args.batch, path, sizes)
    except RuntimeError as e:
        return {**result, "status": "NOEXPORT", "reason": str(e)}
    result.update(size=size, params=params, export_s=round(time.time() - start, 1), devices={})
    if sensitivity < 1e-6:
        result["weak"] = f"torch's output hardly depends on the input (relative change {sensitivity:.0e})"
    x_path = os.path.join(args.work_dir, f"{name}.input.npy")
    np.save(x_path, x)
    for device in args.devices.split(","):
        got = run_device(np, args, name, path, x_path, expected, device)
        result["devices"][device] = got
        if got["status"] == "REFUSED" and "ONNX:" in got["reason"]:
            break  # refused at import: the same on every device
    if args.bad_inputs and name == args.models.split(",")[0]:
        result["bad_inputs_taken"] = check_bad_inputs(np, args, path, size)
    os.remove(path)  # the largest exports run to gigabytes
    result["status"] = overall(result["devices"])
    return result


def describe(r):
    if r["status"] == "NOEXPORT":
        return f"{r['status']:<9}{r['model']} (opset {r['opset']}): torch: {r['reason']}"
    head = f"{r['status']:<9}{r['model']} ({r['size']}x{r['size']}, opset {r['opset']})"
    parts = []
    for device, d in r["devices"].items():
        detail = f"NMSE {d['nmse']:.1e}" if "nmse" in d else d["reason"]
        status = "" if d["status"] == "ok" else d["status"] + " "
        parts.append(f"{device} {status}{detail} ({d.get('seconds', '-')} s)")
    return head + ": " + "; ".join(parts) + (f"; WEAK CHECK: {r['weak']}" if "weak" in r else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--porta-run", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--devices", default="ref,cpu")
    parser.add_argument("--models", default="all", help="comma-separated names, or all")
    parser.add_argument("--opsets", default="13,14,15,16,17", help="the i-th model is exported at the i-th (cycled)")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, help="export at this input size only (default: the smallest it takes)")
    parser.add_argument("--bad-inputs", action="store_true", help="also check porta-run's refusal of bad inputs")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for one porta-run")
    parser.add_argument("--refusals-ok", action="store_true", help="report refusals without failing")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--unless-env", help="skip unless this environment variable is 1 (ctest's whole-zoo entry)")
    args = parser.parse_args()
    if args.unless_env and os.environ.get(args.unless_env) != "1":
        print(f"SKIPPED: the whole torchvision zoo runs only with {args.unless_env}=1 (an hour or more)")
        return SKIP

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
    available = torchvision.models.list_models(module=torchvision.models)
    names = available if args.models == "all" else args.models.split(",")
    unknown = sorted(set(names) - set(available))
    if unknown:
        print(f"FAIL this torchvision {torchvision.__version__} has no model {', '.join(unknown)}")
        return 1
    opsets = [int(o) for o in args.opsets.split(",")]
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}: {len(names)} models on {args.devices}")
    meta = {"torch": torch.__version__, "torchvision": torchvision.__version__, "devices": args.devices.split(","),
            "batch": args.batch, "nmse_limit": NMSE_LIMIT, "listed": available}
    results = []
    for i, name in enumerate(names):
        results.append(check_model(np, torch, torchvision, args, name, opsets[i % len(opsets)]))
        print(describe(results[-1]), flush=True)
        if args.json:  # after each model, so that an interrupted sweep keeps what it found
            with open(args.json, "w") as f:
                json.dump({"meta": meta, "results": results}, f, indent=1)
    statuses = ("ok", "MISMATCH", "REFUSED", "ERROR", "TIMEOUT", "NOEXPORT")
    counts = {s: sum(r["status"] == s for r in results) for s in statuses}
    print("summary: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    failed = counts["MISMATCH"] + counts["ERROR"] + counts["TIMEOUT"] + (0 if args.refusals_ok else counts["REFUSED"])
    failed += sum(r.get("bad_inputs_taken", 0) for r in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
