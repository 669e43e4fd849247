#!/usr/bin/env bash
# ONNX Runtime beside porta on MobileNet-V2 (batch 1, one thread): porta-bench exports it, porta-run
# --compare ort runs it in both and the outputs must agree; `porta-bench model` gives a verified
# onnxruntime row beside porta's; without ORT both say why instead of failing silently.
# Prints "SKIPPED: why" and exits 77 where node or onnxruntime-node is absent.
set -euo pipefail
bench=$1 run=$2 dir=$3
ort=${PORTA_ORT:-$HOME/.cache/porta/onnxruntime-node}
command -v "${PORTA_NODE:-node}" >/dev/null || { echo "SKIPPED: node is not installed (scripts/setup)"; exit 77; }
[ -d "$ort/node_modules/onnxruntime-node" ] ||
  { echo "SKIPPED: onnxruntime-node is not installed in $ort (scripts/setup)"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir"

"$bench" export --model mobilenet-v2 --out m.onnx
"$run" m.onnx --device cpu:threads=1 --compare ort --profile --iterations 3 | tee run.log
awk '/against ORT: relative L2 error/ { found = 1; if ($8 + 0 > 1e-4) bad = 1 }
     END { exit !(found && !bad) }' run.log || { echo "porta and ORT disagree (or no comparison printed)"; exit 1; }
grep -q "^conv2d depthwise" run.log  # the profile's rows, classified by kind
grep -q "ORT time / porta time" run.log

T="--warmup 0.01 --min-time 0.05 --min-samples 3"
"$bench" model --name mobilenet-v2 --device cpu:threads=1 --no-torch $T --json model.json | tee model.log
grep -q "onnxruntime-cpu:threads=1" model.log
python3 - <<'PY'
import json
rows = [r for r in json.load(open("model.json"))["results"] if r["backend"] == "onnxruntime"]
assert len(rows) == 1 and rows[0]["status"] == "ok" and rows[0]["verified"] is True, rows
assert rows[0]["median_s"] > 0 and "onnxruntime-node" in rows[0]["params"]["reference"], rows
PY

# Without ORT: porta-run stops with the reason, porta-bench writes an unsupported row saying why.
if PORTA_ORT=/nonexistent "$run" m.onnx --compare ort --iterations 1 >absent.log 2>&1; then
  echo "porta-run --compare ort succeeded without ONNX Runtime"; exit 1
fi
grep -q "ONNX Runtime is not installed in /nonexistent" absent.log
PORTA_ORT=/nonexistent "$bench" model --name mobilenet-v2 --device cpu:threads=1 --no-torch $T --json absent.json
python3 - <<'PY'
import json
rows = [r for r in json.load(open("absent.json"))["results"] if r["backend"] == "onnxruntime"]
assert len(rows) == 1 and rows[0]["status"] == "unsupported" and "not installed" in rows[0]["reason"], rows
PY
echo "ORT beside porta: outputs agree, rows verified, absence explained"
