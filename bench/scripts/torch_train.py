"""PyTorch eager training steps, run by `porta-bench train` beside porta on the same CPU.

The same experiment as porta's rows: the network in training mode (its dropout and stochastic depth
on, unless --no-dropout), softmax cross-entropy to random class labels, SGD with momentum and weight
decay, a few fixed batches of random images cycled through each epoch of --images (rounded down to
whole batches), every epoch timed and the last one reported. The weights are torchvision's own
initialisation (or the mlp's below), not porta's.
Prints one JSON object, or {"error": ...} when torch is unusable.

glibc's malloc hands each large block (a step's activations) back to the system when it is freed and
maps it again, zeroed, at the next step: on the 2-vCPU Zen 4 guest that made PyTorch's step up to
1.9x slower at batch 32 (3-13 % at batch 8). The script runs itself again with the allocator keeping
freed memory, as PyTorch's CPU performance advice (jemalloc or tcmalloc) would have a user do.
"""
import json
import os
import sys
import time

import torch_timing

KEEP_FREED = "glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=68719476736"


def mlp(torch):
    """porta-bench's mlp: 3x32x32 images, gemm 3072x512, batchnorm, tanh, gemm 512x10."""
    nn = torch.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 512), nn.BatchNorm1d(512), nn.Tanh(), nn.Linear(512, 10))


def main():
    p = torch_timing.parser()  # --model: mlp, resnet50, efficientnet-b0 ... efficientnet-b7, mobilenet-v2
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--resolution", type=int, required=True)
    p.add_argument("--classes", type=int, required=True)
    p.add_argument("--images", type=int, default=2048)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--momentum", type=float, required=True)
    p.add_argument("--weight-decay", type=float, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-dropout", action="store_true", help="dropout and stochastic depth probabilities set to 0")
    a = p.parse_args()  # the timing options are accepted but do not apply: every epoch is timed
    imported = torch_timing.import_torch(a.threads)
    if imported is None:
        return
    _, torch, torchvision = imported
    torch.manual_seed(a.seed)
    # porta's model names as torchvision spells them: vit-b16 is vit_b_16, the rest only swap - for _.
    name = {"vit-b16": "vit_b_16"}.get(a.model, a.model.replace("-", "_"))
    if a.model == "mlp":
        model = mlp(torch)
    elif hasattr(torchvision.models, name):
        model = getattr(torchvision.models, name)(weights=None)
    else:
        print(json.dumps({"error": f"torchvision {torchvision.__version__} has no {name}"}))
        return
    model.train()  # dropout and stochastic depth on, as porta's training graph has them
    if a.no_dropout:
        for m in model.modules():
            if isinstance(m, (torch.nn.Dropout, torchvision.ops.StochasticDepth)):
                m.p = 0.0
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum, weight_decay=a.weight_decay)
    steps = max(1, a.images // a.batch)
    shape = (a.batch, 3, a.resolution, a.resolution)
    data = [(torch.rand(shape) * 2 - 1, torch.randint(0, a.classes, (a.batch,)))
            for _ in range(min(steps, 4))]
    epochs, losses = [], []
    for _ in range(a.epochs):
        start = time.perf_counter()
        for s in range(steps):
            x, y = data[s % len(data)]
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if s in (0, steps - 1):
                losses.append(loss.item())
        epochs.append(time.perf_counter() - start)
    print(json.dumps({
        "epoch_s": epochs,
        "steps_per_epoch": steps,
        "loss_first": losses[0],
        "loss_last": losses[-1],
        "version": f"torch {torch.__version__}, torchvision {torchvision.__version__}, {a.threads} threads, "
                   "glibc malloc keeping freed memory",
    }))


if __name__ == "__main__":
    if KEEP_FREED not in os.environ.get("GLIBC_TUNABLES", ""):  # read at start-up only: run again with it
        tunables = ":".join(t for t in (os.environ.get("GLIBC_TUNABLES", ""), KEEP_FREED) if t)
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, GLIBC_TUNABLES=tunables))
    sys.exit(main())
