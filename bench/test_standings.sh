#!/usr/bin/env bash
# docs/benchmarks.md must be what `porta-bench report --markdown` makes of docs/results/*.json, byte for
# byte: a result file added or replaced there comes with the page regenerated, and README.md's "Where it
# stands" with the page's summary lines. Exit 77 (skipped) while
# docs/results/ holds no result file.
set -euo pipefail
bench=$1 source=$2 out=$3
shopt -s nullglob
files=("$source"/docs/results/*.json)
if ((${#files[@]} == 0)); then
  echo "docs/results/ holds no result file yet: skipped"
  exit 77
fi
mkdir -p "$(dirname "$out")"
"$bench" report --markdown "$out" "${files[@]}" >/dev/null
if ! cmp -s "$out" "$source/docs/benchmarks.md"; then
  diff -u "$source/docs/benchmarks.md" "$out" | head -n 40 || true
  echo "docs/benchmarks.md (-) is not the page of docs/results/ (+); regenerate it from the repository root:"
  echo "  porta-bench report --markdown docs/benchmarks.md docs/results/*.json"
  exit 1
fi
# The README's "Where it stands" repeats the page's summary lines.
summary() { awk '/^## Summary/ { on = 1; next } /^## / { on = 0 } on && /^- /' "$1"; }
quoted() { awk '/<!-- the summary of docs\/benchmarks.md -->/ { on = 1; next } /<!-- end of the summary -->/ { on = 0 }
                on && /^- /' "$1"; }
if [ "$(summary "$out")" != "$(quoted "$source/README.md")" ]; then
  diff -u <(quoted "$source/README.md") <(summary "$out") || true
  echo "README.md's summary (-) is not docs/benchmarks.md's (+): copy the page's ## Summary lines into it"
  exit 1
fi
echo "docs/benchmarks.md is the page of its ${#files[@]} result files, and README.md quotes its summary"
