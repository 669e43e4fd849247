"""PyTorch eager inference timing, run by `porta-bench model` beside porta on the same CPU.

Prints one JSON object: the timing under the same policy porta-bench uses (warm-up by time, then
at least --min-samples runs and --min-time seconds), or {"error": ...} when torch is unusable.
"""
import argparse
import json
import statistics
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)  # resnet50, efficientnet-b0 ... efficientnet-b7, mobilenet-v2
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--resolution", type=int, required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=float, default=0.1)
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--max-time", type=float, default=10.0)
    a = p.parse_args()
    try:
        import torch
        import torchvision
    except ImportError as e:
        print(json.dumps({"error": f"PyTorch is not installed ({e})"}))
        return
    torch.set_num_threads(a.threads)
    name = a.model.replace("-", "_")
    if not hasattr(torchvision.models, name):
        print(json.dumps({"error": f"torchvision {torchvision.__version__} has no {name}"}))
        return
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(a.batch, 3, a.resolution, a.resolution)
    with torch.inference_mode():
        start = time.perf_counter()
        model(x)
        first = time.perf_counter() - start
        end = time.perf_counter() + a.warmup
        while time.perf_counter() < end:
            model(x)
        samples, began = [], time.perf_counter()
        while (len(samples) < a.min_samples or time.perf_counter() - began < a.min_time) and \
                time.perf_counter() - began < a.max_time:
            start = time.perf_counter()
            model(x)
            samples.append(time.perf_counter() - start)
    ordered = sorted(samples)
    print(json.dumps({
        "median_s": statistics.median(samples),
        "min_s": ordered[0],
        "p90_s": ordered[max(0, -(-9 * len(ordered) // 10) - 1)],
        "samples": len(samples),
        "first_run_s": first,
        "version": f"torch {torch.__version__}, torchvision {torchvision.__version__}, {a.threads} threads",
    }))


if __name__ == "__main__":
    sys.exit(main())
