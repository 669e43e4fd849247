"""PyTorch eager inference timing of a torchvision CNN, run by `porta-bench model` beside porta on the
same CPU. Prints one JSON object (torch_timing.py), or {"error": ...} when torch is unusable.
"""
import json
import sys

import torch_timing


def main():
    p = torch_timing.parser()  # --model: resnet50, efficientnet-b0 ... efficientnet-b7, mobilenet-v2
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--resolution", type=int, required=True)
    a = p.parse_args()
    modules = torch_timing.import_torch(a.threads)
    if modules is None:
        return
    _, torch, torchvision = modules
    name = a.model.replace("-", "_")
    if not hasattr(torchvision.models, name):
        print(json.dumps({"error": f"torchvision {torchvision.__version__} has no {name}"}))
        return
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(a.batch, 3, a.resolution, a.resolution)
    _, first, samples = torch_timing.timed(torch, lambda: model(x), a)
    torch_timing.report(torch, torchvision, first, samples, a)


if __name__ == "__main__":
    sys.exit(main())
