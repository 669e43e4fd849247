"""PyTorch eager inference of porta's transformer models, with porta's weights, run by `porta-bench model`.

BERT is the model as Hugging Face's BertModel computes it in eager mode (nn.Embedding, nn.Linear,
matmul, softmax, nn.LayerNorm, erf GELU, the pooler), its padding mask added to the scores as the
original BERT code adds it, (mask - 1) * 10000; ViT-B/16 is torchvision's vit_b_16. Both load the
weights and inputs porta made (--tensors: a JSON list of name, shape and offset into a float32 file),
write their outputs one after another to --output (float32) for porta-bench to compare with porta's,
and print one JSON object with the timing (torch_timing.py); or {"error": ...} when torch is unusable.
"""
import json
import math
import sys

import torch_timing

BERT_LAYER = {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
              "dense": "attention.output.dense", "norm_1": "attention.output.LayerNorm",
              "intermediate": "intermediate.dense", "output": "output.dense", "norm_2": "output.LayerNorm"}


def bert(torch, weights, hidden, heads, layers):
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

        def forward(self, x, mask):
            q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hidden // heads) + mask
            context = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(x.shape)
            x = self.norm_1(self.dense(context) + x)
            return self.norm_2(self.output(nn.functional.gelu(self.intermediate(x))) + x)

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.words = nn.Embedding(*weights["embeddings.word_embeddings.weight"].shape)
            self.positions = nn.Embedding(*weights["embeddings.position_embeddings.weight"].shape)
            self.segments = nn.Embedding(*weights["embeddings.token_type_embeddings.weight"].shape)
            self.norm = nn.LayerNorm(hidden, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.pooler = nn.Linear(hidden, hidden)

        def forward(self, ids, segments, mask):
            positions = torch.arange(ids.shape[1]).unsqueeze(0)
            x = self.norm(self.words(ids) + self.segments(segments) + self.positions(positions))
            additive = ((mask - 1.0) * 10000.0)[:, None, None, :]
            for layer in self.layers:
                x = layer(x, additive)
            return x, torch.tanh(self.pooler(x[:, 0]))

    model = Bert()
    names = {"words": "embeddings.word_embeddings", "positions": "embeddings.position_embeddings",
             "segments": "embeddings.token_type_embeddings", "norm": "embeddings.LayerNorm", "pooler": "pooler.dense"}
    for i in range(layers):
        names.update({f"layers.{i}.{mine}": f"encoder.layer.{i}.{theirs}" for mine, theirs in BERT_LAYER.items()})
    state = {}
    for key in model.state_dict():
        module, _, what = key.rpartition(".")
        state[key] = weights[names[module] + "." + what]
    model.load_state_dict(state)
    inputs = (weights["input_ids"].long(), weights["token_type_ids"].long(), weights["attention_mask"])
    return model, inputs


def vit(torch, torchvision, weights, classes):
    model = torchvision.models.vit_b_16(weights=None, num_classes=classes)
    state = {}
    for key in model.state_dict():
        parts = [weights.get(f"{key}.{which}") for which in "qkv"]
        state[key] = torch.cat(parts) if parts[0] is not None else weights[key]
    model.load_state_dict(state)
    return model, (weights["input"],)


def load(np, torch, manifest):
    with open(manifest) as f:
        index = json.load(f)
    data = np.fromfile(index["file"], dtype=np.float32)
    tensors = {}
    for t in index["tensors"]:
        count = math.prod(t["shape"])
        tensors[t["name"]] = torch.from_numpy(data[t["offset"]:t["offset"] + count].reshape(t["shape"]).copy())
    return tensors


def main():
    p = torch_timing.parser()  # --model: bert-base, bert-large, vit-b16
    p.add_argument("--tensors", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--classes", type=int, default=1000)
    a = p.parse_args()
    modules = torch_timing.import_torch(a.threads, blas_bound=True)
    if modules is None:
        return
    np, torch, torchvision = modules
    tensors = load(np, torch, a.tensors)
    if a.model == "vit-b16":
        model, inputs = vit(torch, torchvision, tensors, a.classes)
    else:
        large = a.model == "bert-large"
        model, inputs = bert(torch, tensors, 1024 if large else 768, 16 if large else 12, 24 if large else 12)
    model.eval()
    y, first, samples = torch_timing.timed(torch, lambda: model(*inputs), a)
    outputs = y if isinstance(y, tuple) else (y,)
    np.concatenate([o.detach().numpy().astype(np.float32).ravel() for o in outputs]).tofile(a.output)
    torch_timing.report(torch, torchvision, first, samples, a)


if __name__ == "__main__":
    sys.exit(main())
