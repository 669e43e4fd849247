#!/usr/bin/env bash
# Two short runs (cpu with 1 and with 2 threads) merged by `porta-bench report`, rendered in
# headless Chromium; the rendered page must show every workload and device with the JSON's numbers.
# Exit 77 (skipped) where Chromium or python3 is absent.
set -euo pipefail
bench=$1 dir=$2
command -v chromium >/dev/null || { echo "chromium not installed: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed: skipped"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir"

cat > gemm.csv <<'CSV'
name,m,n,k,dtype
square,96,96,96,f32
odd,65,33,129,f32
half,64,64,64,f16
CSV
T="--warmup 0.01 --min-time 0.05 --min-samples 3"
"$bench" run --workload gemm.csv --device cpu:threads=1 --impl native,vendor $T --out one >one.log
"$bench" run --workload gemm.csv --device cpu:threads=2 $T --out two >two.log
"$bench" report one/results.json two/results.json -o report.html
"$bench" compare one/results.json two/results.json | tee compare.log
grep -q "Geometric mean of A/B time over" compare.log

chrome=(chromium --headless --no-sandbox --disable-gpu --user-data-dir="$PWD/chromium-profile")
"${chrome[@]}" --dump-dom "file://$PWD/report.html" >dom.html 2>chromium.log
"${chrome[@]}" --window-size=1200,2400 --hide-scrollbars --screenshot="$PWD/report.png" \
  "file://$PWD/report.html" >>chromium.log 2>&1
test -s report.png

python3 - one/results.json two/results.json <<'PY'
import json, sys
from html.parser import HTMLParser

class Page(HTMLParser):
    """The bars (with their visible text), the rooflines and their points, and all the text."""
    def __init__(self):
        super().__init__()
        self.bars, self.rooflines, self.text, self.stack = [], [], [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "g" and a.get("class") == "bar":
            self.bars.append({**a, "text": ""})
            self.stack.append("bar")
        elif tag == "g":
            self.stack.append("g")
        if tag == "svg" and a.get("class") == "roofline":
            self.rooflines.append({"platform": a["data-platform"], "points": 0})
        if tag == "circle" and a.get("class") == "point":
            self.rooflines[-1]["points"] += 1
    def handle_endtag(self, tag):
        if tag == "g" and self.stack:
            self.stack.pop()
    def handle_data(self, data):
        self.text.append(data)
        if self.stack and self.stack[-1] == "bar":
            self.bars[-1]["text"] += data + " "

page = Page()
page.feed(open("dom.html").read())
text = " ".join(page.text)
bars = {(b["data-problem"], b["data-series"]): b for b in page.bars}
problems = set()
for path in sys.argv[1:]:
    doc = json.load(open(path))
    for d in doc["env"]["devices"]:
        assert d["spec"] in text, f"device {d['spec']} missing from the page"
    for row in doc["results"]:
        problem = f"{row['op']} {row['workload']} {row['dtype']}"
        series = row["device"] + ("" if row["impl"] == "native" else " " + row["impl"])
        assert (problem, series) in bars, f"no bar for {problem} on {series}"
        bar = bars[(problem, series)]
        if row["status"] == "ok":
            want = f"{row['gflops']:.1f}"
            assert bar.get("data-gflops") == want, f"{problem} {series}: page {bar.get('data-gflops')}, JSON {want}"
            assert want in bar["text"].split(), f"{problem} {series}: {want} not shown ({bar['text']})"
        else:
            assert row["status"] in bar["text"], f"{problem} {series}: status {row['status']} not shown"
        if row["status"] == "ok" and row["impl"] == "native":  # porta's cpu kernels say what they ran
            assert row["algo"] and row["algo"].startswith("gemm "), f"{problem} {series}: algo {row['algo']!r}"
        if row["algo"]:
            assert row["algo"] in text, f"{problem} {series}: algo {row['algo']} not on the page"
        problems.add(problem)
for p in problems:
    assert p in text, f"workload {p} missing"
assert len(page.rooflines) == 2 and all(r["points"] > 0 for r in page.rooflines), page.rooflines
for heading in ["What ran", "Speedups", "Performance portability", "Roofline per device", "cpu:threads=2 / cpu:threads=1"]:
    assert heading in text, f"'{heading}' missing"
print(f"report OK: {len(bars)} bars, {len(problems)} workloads, rooflines {page.rooflines}")
PY
