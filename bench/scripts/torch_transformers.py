"""PyTorch eager inference of porta's transformer models, with porta's weights, run by `porta-bench model`.

BERT is the encoder as Hugging Face's BertModel computes it in eager mode (nn.Linear, matmul,
softmax, nn.LayerNorm, erf GELU); ViT-B/16 is torchvision's vit_b_16. Both load the weights porta
built (--tensors: a JSON list of name, shape and offset into a float32 file), run porta's input,
write their output to --output (float32) for porta-bench to compare with porta's, and print one JSON
object with the timing, under the policy porta-bench uses; or {"error": ...} when torch is unusable.
"""
import argparse
import json
import math
import statistics
import sys
import time


def bert_encoder(torch, weights, hidden, heads, layers):
    nn = torch.nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
            self.dense = nn.Linear(hidden, hidden)
            self.norm_1 = nn.LayerNorm(hidden, eps=1e-12)
            self.intermediate = nn.Linear(hidden, 4 * hidden)
            self.output = nn.Linear(4 * hidden, hidden)
            self.norm_2 = nn.LayerNorm(hidden, eps=1e-12)

        def heads(self, x):
            b, s, _ = x.shape
            return x.view(b, s, heads, hidden // heads).permute(0, 2, 1, 3)

        def forward(self, x):
            q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hidden // heads)
            context = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(x.shape)
            x = self.norm_1(self.dense(context) + x)
            return self.norm_2(self.output(nn.functional.gelu(self.intermediate(x))) + x)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(hidden, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))

        def forward(self, x):
            x = self.norm(x)
            for layer in self.layers:
                x = layer(x)
            return x

    model = Encoder()
    names = {"norm": "embeddings.LayerNorm"}
    for i in range(layers):
        p = f"encoder.layer.{i}."
        ours = {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
                "dense": "attention.output.dense", "norm_1": "attention.output.LayerNorm",
                "intermediate": "intermediate.dense", "output": "output.dense", "norm_2": "output.LayerNorm"}
        names.update({f"layers.{i}.{mine}": p + theirs for mine, theirs in ours.items()})
    state = {}
    for key in model.state_dict():
        module, _, what = key.rpartition(".")
        state[key] = weights[names[module] + "." + what]
    model.load_state_dict(state)
    return model


def vit(torch, torchvision, weights, classes):
    model = torchvision.models.vit_b_16(weights=None, num_classes=classes)
    state = {}
    for key in model.state_dict():
        parts = [weights.get(f"{key}.{which}") for which in "qkv"]
        state[key] = torch.cat(parts) if parts[0] is not None else weights[key]
    model.load_state_dict(state)
    return model


def load(np, torch, manifest):
    with open(manifest) as f:
        index = json.load(f)
    data = np.fromfile(index["file"], dtype=np.float32)
    tensors = {}
    for t in index["tensors"]:
        count = math.prod(t["shape"])
        tensors[t["name"]] = torch.from_numpy(data[t["offset"]:t["offset"] + count].reshape(t["shape"]).copy())
    return tensors


def timed(torch, model, x, a):
    with torch.inference_mode():
        start = time.perf_counter()
        y = model(x)
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
    return y, first, samples


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)  # bert-base, bert-large, vit-b16
    p.add_argument("--tensors", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=float, default=0.1)
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--max-time", type=float, default=10.0)
    a = p.parse_args()
    try:
        import numpy as np
        import torch
        import torchvision
    except ImportError as e:
        print(json.dumps({"error": f"PyTorch is not installed ({e})"}))
        return
    torch.set_num_threads(a.threads)
    tensors = load(np, torch, a.tensors)
    if a.model == "vit-b16":
        model = vit(torch, torchvision, tensors, a.classes)
    else:
        large = a.model == "bert-large"
        model = bert_encoder(torch, tensors, 1024 if large else 768, 16 if large else 12, 24 if large else 12)
    y, first, samples = timed(torch, model.eval(), tensors["input"], a)
    y.detach().numpy().astype(np.float32).tofile(a.output)
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
