"""What porta-bench's PyTorch reference scripts share: their command line, the import of torch, the
timing policy porta-bench uses (warm-up by time, then at least --min-samples runs and --min-time
seconds, at most --max-time) and the JSON line they print.
"""
import argparse
import json
import os
import statistics
import time


def parser():
    """The options every script takes; each adds its own."""
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=float, default=0.1)
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--max-time", type=float, default=10.0)
    return p


def import_torch(threads, blas_bound=False):
    """(numpy, torch, torchvision) on `threads` threads, or None once the error is printed.

    torch.set_num_threads does not reach the BLAS under torch and numpy (OpenBLAS in Debian's
    packages), which sizes its own pool from the environment when it loads: without these variables
    a 1-thread run's GEMMs ran on every core (2048^3 at 202 GFLOP/s on two Zen 4 cores, 102 on one).
    OpenBLAS's threads are not torch's OpenMP threads, which spin for a while after each parallel
    region: in a network of GEMMs (`blas_bound`, the transformers) they took the cores from OpenBLAS
    (BERT-base b1 on 2 threads 576 ms) unless they sleep at once (160 ms). Elsewhere sleeping costs
    more than it saves (ResNet-50 b1 53 -> 84 ms: its convolutions are torch's own OpenMP loops).
    """
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(threads)
    if blas_bound:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        import numpy
        import torch
        import torchvision
    except ImportError as e:
        print(json.dumps({"error": f"PyTorch is not installed ({e})"}))
        return None
    torch.set_num_threads(threads)
    return numpy, torch, torchvision


def timed(torch, run, a):
    """run() under the timing policy, without autograd: (its first result, first run's seconds, samples)."""
    with torch.inference_mode():
        start = time.perf_counter()
        y = run()
        first = time.perf_counter() - start
        end = time.perf_counter() + a.warmup
        while time.perf_counter() < end:
            run()
        samples, began = [], time.perf_counter()
        while (len(samples) < a.min_samples or time.perf_counter() - began < a.min_time) and \
                time.perf_counter() - began < a.max_time:
            start = time.perf_counter()
            run()
            samples.append(time.perf_counter() - start)
    return y, first, samples


def report(torch, torchvision, first, samples, a):
    """The JSON line porta-bench reads."""
    ordered = sorted(samples)
    print(json.dumps({
        "median_s": statistics.median(samples),
        "min_s": ordered[0],
        "p90_s": ordered[max(0, -(-9 * len(ordered) // 10) - 1)],
        "samples": len(samples),
        "first_run_s": first,
        "version": f"torch {torch.__version__}, torchvision {torchvision.__version__}, {a.threads} threads",
    }))
