#!/usr/bin/env bash
# test_mpi.sh PORTA_BENCH DIR CASE NP: porta-bench as an MPI job of NP ranks on this machine
# (mpirun --oversubscribe). CASE is one of
#   gather  `run` on every rank: one results file at rank 0, rows of every rank with host and rank,
#           each rank's env, and the report with every rank's platform;
#   comm    every collective, f32 and bf16, checked against a serial computation on each rank, and
#           each rank's host-device copies on opencl:0 (where the machine has one);
#   fail    rank 1 fails at its device: the job ends with rank 1's error and exit code, not a hang;
#   kill    rank 1 is killed mid-run: the job ends with an error, not a hang;
#   stall   rank 1 is stopped mid-run: rank 0 ends the job after --rank-timeout with that message;
#   stall-train  rank 1 stops itself before its second data-parallel step: another rank ends the
#           job after --rank-timeout, naming the allreduce and its bucket;
#   train   train --data-parallel, SGD and AdamW, with dropout: the loss curve and variables equal one
#           process's with the same global batch and seed (each rank's shard draws the whole batch's
#           dropout masks for its rows), the variables identical on every rank, the scaling efficiency
#           recorded, the same variables without the overlap (--no-overlap); a batch that does not
#           split across the ranks is refused, and taken as each rank's with --scaling weak;
#   train-mixed  the same in mixed precision, --precision bf16 and f16 (loss-scaled), SGD: the loss
#           curve and variables within bf16's or f16's rounding of one process's, the loss scale equal.
# Exits 77 (skipped) where mpirun or porta-bench's MPI module is absent.
set -euo pipefail
bench=$1 dir=$2 case=$3 np=$4
module=$(dirname "$bench")/../lib/porta/libporta-bench-mpi.so
command -v mpirun >/dev/null || { echo "SKIPPED: no mpirun (scripts/setup installs openmpi-bin)"; exit 77; }
[ -e "$module" ] || { echo "SKIPPED: porta-bench was built without MPI (no $module)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIPPED: no python3 to read the results"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
mpi=(mpirun --oversubscribe --allow-run-as-root -np "$np")
cat > gemm.csv <<'CSV'
name,m,n,k,dtype
small,32,32,32,f32
CSV
run=(run --workload gemm.csv --warmup 0 --min-samples 2 --min-time 0 --out out)
# Each case's job must end by itself well within this, or it hung.
limit=90

# The job's exit code and stderr. The job has ended once mpirun has, or once every rank it started
# has exited: Open MPI 4.1's mpirun now and then lingers for good after MPI_Abort with all its ranks
# already zombies (seen when a rank had been stopped); it is given 10 s, then ended here, and the
# test says so. A rank still running at the limit is a hang: the processes alive are listed, so that
# it can be read afterwards.
job() {
  set +e
  local start=$SECONDS lingered=0
  "${mpi[@]}" "$@" >stdout.txt 2>stderr.txt &
  local launcher=$!
  while kill -0 $launcher 2>/dev/null; do
    if ((SECONDS - start >= limit)); then
      cat stdout.txt stderr.txt
      echo "the job hung: still running after $limit s:"
      ps -eo pid,ppid,pgid,stat,etime,args | grep -E "[m]pirun|[p]orta-bench|[b]ash -c"
      pkill -KILL -P $launcher; kill -KILL $launcher
      exit 1
    fi
    local ranks
    ranks=$(ps --ppid $launcher -o stat= | tr -d ' ')
    if [ -n "$ranks" ] && ! grep -qv '^Z' <<<"$ranks"; then
      if ((++lingered == 100)); then
        echo "every rank had exited 10 s ago, mpirun had not: ended it"
        kill -KILL $launcher
      fi
    fi
    sleep 0.1
  done
  wait $launcher
  code=$?
  set -e
  echo "exit code $code"
}

case $case in
gather)
  job "$bench" "${run[@]}" --device cpu:threads=1
  [ "$code" = 0 ] || { cat stdout.txt stderr.txt; exit 1; }
  [ "$(find . -name results.json | wc -l)" = 1 ] || { echo "not one results file:"; find . -name 'results.*'; exit 1; }
  python3 - out/results.json out/results.csv out/report.html "$np" <<'PY'
import csv, json, sys
doc, np = json.load(open(sys.argv[1])), int(sys.argv[4])
env = doc["env"]
assert env["job"]["ranks"] == np, env["job"]
assert [e["rank"] for e in env["ranks"]] == list(range(np)), "every rank's env, in rank order"
for e in env["ranks"]:
    assert e["hostname"] and e["devices"] and e["devices"][0]["spec"] == "cpu:threads=1", e
rows = [r for r in doc["results"] if r["op"] == "gemm"]
assert sorted(r["rank"] for r in rows) == list(range(np)), [r.get("rank") for r in rows]
assert all(r["host"] and r["status"] == "ok" and r["verified"] for r in rows), rows
table = list(csv.DictReader(open(sys.argv[2])))
assert sorted(int(r["rank"]) for r in table if r["op"] == "gemm") == list(range(np)), "rank in the CSV"
page = open(sys.argv[3]).read()
for rank in range(np):
    assert f"results.json rank {rank}" in page, f"rank {rank} is not a platform of the report"
print(f"{np} ranks: {len(doc['results'])} rows in one file, every rank's env and platform")
PY
  ;;
comm)
  job "$bench" comm --max-bytes 65536 --factor 8 --min-time 0 --min-iters 2 --warmup-iters 1 --device opencl:0 --out out
  [ "$code" = 0 ] || { cat stdout.txt stderr.txt; exit 1; }
  [ "$(find . -name results.json | wc -l)" = 1 ] || { echo "not one results file"; exit 1; }
  python3 - out/results.json out/report.html "$np" <<'PY'
import json, sys
doc, np = json.load(open(sys.argv[1])), int(sys.argv[3])
rows = doc["results"]
factor = {"allreduce": 2 * (np - 1) / np, "allgather": (np - 1) / np, "reduce-scatter": (np - 1) / np, "broadcast": 1}
native = [r for r in rows if r["impl"] == "native" and r["op"] in factor]
copies = [r for r in rows if r["op"] in ("host-to-device", "device-to-host")]
assert sorted({r["rank"] for r in copies}) == list(range(np)), "every rank's copies"
assert all(r["verified"] and r["gbs"] > 0 for r in copies if r["status"] == "ok"), copies
assert all(r["status"] in ("ok", "unsupported") for r in copies), copies
for op in factor:
    for dtype in ("f32", "bf16"):
        mine = [r for r in native if r["op"] == op and r["dtype"] == dtype]
        assert len(mine) >= 4, f"{op} {dtype}: {len(mine)} sizes"
for r in native:
    assert r["params"]["ranks"] == np and r["verified"] is True and r["max_abs"] == 0, r
    assert abs(r["algbw_gbs"] - r["bytes"] / r["mean_s"] * 1e-9) <= 1e-9 * r["algbw_gbs"], r
    assert abs(r["busbw_gbs"] - r["algbw_gbs"] * factor[r["op"]]) <= 1e-9 * r["algbw_gbs"], r
assert any(r["impl"] == "plain-mpi" for r in rows), "no plain MPI_Allreduce reference"
page = open(sys.argv[2]).read()
assert all(f'data-op="{op}"' in page for op in factor), "a collective is not charted"
ok = sum(r["status"] == "ok" for r in copies)
print(f"{np} ranks: {len(native)} collectives, each equal to the serial result; "
      f"{ok} copies verified, {len(copies) - ok} unsupported")
PY
  ;;
fail)
  # Rank 1 names a device that does not exist while rank 0 runs on.
  job bash -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then d=nosuch:0; else d=cpu:threads=1; fi
               exec "$0" "$@" --device $d' "$bench" "${run[@]}"
  grep -q "porta-bench: rank 1 (.*): error: .*nosuch" stderr.txt ||
    { cat stderr.txt; echo "no error of rank 1"; exit 1; }
  [ "$code" = 2 ] || { cat stderr.txt; echo "the job did not exit with rank 1's code (2)"; exit 1; }
  ;;
kill | stall)
  # Rank 1's porta-bench is killed (or stopped, so that it never answers) once its suite has begun:
  # past MPI's start-up, which no --rank-timeout can bound, however slowly a loaded machine gets there.
  signal=KILL && [ "$case" = stall ] && signal=STOP
  job bash -c 'if [ "$OMPI_COMM_WORLD_RANK" != 1 ]; then exec "$0" "$@" --device cpu:threads=1; fi
               "$0" "$@" --device cpu:threads=1 2>rank1.txt & rank=$!
               until grep -q "suite" rank1.txt 2>/dev/null || ! kill -0 $rank 2>/dev/null; do sleep 0.1; done
               kill -'$signal' $rank; wait $rank' \
    "$bench" "${run[@]}" --rank-timeout 5
  [ "$code" != 0 ] || { cat stderr.txt; echo "the job succeeded without rank 1"; exit 1; }
  if [ "$case" = kill ]; then
    grep -q "Exit code: *137" stderr.txt || { cat stderr.txt; echo "mpirun did not name the killed rank"; exit 1; }
  fi
  if [ "$case" = stall ]; then
    grep -q "porta-bench: rank 0 (.*): error: not every rank came to gather the results within 5 s" stderr.txt ||
      { cat stderr.txt; echo "rank 0 did not end the job for the stalled rank"; exit 1; }
  fi
  ;;
stall-train)
  job bash -c '[ "$OMPI_COMM_WORLD_RANK" = 1 ] && export PORTA_BENCH_STOP_AT_STEP=2; exec "$0" "$@"' \
    "$bench" train --data-parallel --model mlp-nobn --batch 24 --images 96 --epochs 1 --bucket-mib 1 \
    --device cpu:threads=1 --rank-timeout 20
  [ "$code" != 0 ] || { cat stderr.txt; echo "the job succeeded without rank 1"; exit 1; }
  # Whichever running rank's wait ends first ends the job.
  stalled="error: not every rank came to the allreduce of gradient bucket 1 of [0-9]* ([0-9]* f32) within 20 s"
  grep -q "porta-bench: rank [02] (.*): $stalled" stderr.txt ||
    { cat stderr.txt; echo "rank 0 did not end the job in the allreduce of the stalled rank"; exit 1; }
  ;;
train)
  train=(train --data-parallel --model mlp-nobn --images 96 --epochs 2 --bucket-mib 1 --device cpu:threads=1)
  for optimizer in sgd adamw; do
    "$bench" "${train[@]}" --optimizer $optimizer --batch 24 --json one-$optimizer.json >one.txt 2>&1 ||
      { cat one.txt; exit 1; }
    job "$bench" "${train[@]}" --optimizer $optimizer --batch 24 --json job-$optimizer.json
    [ "$code" = 0 ] || { cat stdout.txt stderr.txt; exit 1; }
    python3 - one-$optimizer.json job-$optimizer.json "$np" $optimizer <<'PY'
import json, sys
one, job, np = json.load(open(sys.argv[1]))["results"], json.load(open(sys.argv[2]))["results"], int(sys.argv[3])
optimizer = sys.argv[4]
assert all(r["params"]["optimizer"] == optimizer for r in one + job), [r["params"] for r in job]
assert all(r["params"]["dropout"] is True for r in one + job), "mlp-nobn trains with its dropout"
assert [r["params"]["ranks"] for r in one] == [1, 1] and [r["params"]["ranks"] for r in job] == [1, np], job
assert all(r["status"] == "ok" for r in one + job), [r["reason"] for r in one + job]
fused, split, parallel = one[0], one[1], job[1]
# The loss of the global batch at each step, and each variable's fingerprint, within these of one
# process's: the ranks sum their shards' gradients in another order than one process sums the batch.
rtol, atol = 1e-5, 1e-7
def close(a, b, scale):
    return abs(a - b) <= rtol * abs(scale) + atol
for key in ("loss_first", "loss_last"):
    for r in (split, parallel):
        assert close(r["params"][key], fused["params"][key], fused["params"][key]), (key, r["params"][key], fused)
curve1, curve = split["params"]["loss_curve"], parallel["params"]["loss_curve"]
assert len(curve) == len(curve1) == 8 and curve[-1] < curve[0], curve
worst = max(abs(a - b) / abs(b) for a, b in zip(curve, curve1))
assert all(close(a, b, b) for a, b in zip(curve, curve1)), (curve, curve1)
prints1, prints = split["params"]["variable_fingerprints"], parallel["params"]["variable_fingerprints"]
# 4 weights and per weight, a velocity (SGD) or two moments and one step count (AdamW)
assert prints1.keys() == prints.keys() and len(prints) == {"sgd": 8, "adamw": 13}[optimizer], prints.keys()
for name, (mixed, magnitude) in prints.items():
    assert close(mixed, prints1[name][0], magnitude) and close(magnitude, prints1[name][1], magnitude), name
p = parallel["params"]
assert p["data_parallel"] and p["batch_per_rank"] == 24 // np and p["buckets"] >= 2, p
assert len(p["variables_fnv1a"]) == 16, p
assert p["scaling_efficiency"] > 0 and p["baseline_images_per_s"] == job[0]["params"]["images_per_s"], p
print(f"{np} ranks, {optimizer}: loss {curve[0]:.6f} -> {curve[-1]:.6f} over {len(curve)} steps, at most {worst:.2e} from one "
      f"process's; {len(prints)} variables within {rtol} of it; {p['images_per_s']:.0f} images/s, "
      f"scaling efficiency {p['scaling_efficiency']:.2f} against one rank's {p['baseline_images_per_s']:.0f}")
PY
  done
  # The allreduces started after the backward pass instead: the same sums, so the same variables.
  job "$bench" "${train[@]}" --no-overlap --batch 24 --json later.json
  [ "$code" = 0 ] || { cat stdout.txt stderr.txt; exit 1; }
  python3 - job-sgd.json later.json <<'PY'
import json, sys
during, after = (json.load(open(f))["results"][1]["params"] for f in sys.argv[1:3])
assert during["allreduce_overlap"] is True and after["allreduce_overlap"] is False, (during, after)
assert during["variables_fnv1a"] == after["variables_fnv1a"], (during["variables_fnv1a"], after["variables_fnv1a"])
print(f"allreduce waited for after the backward pass: {during['step_allreduce_s'] * 1e3:.2f} ms a step with the "
      f"overlap, {after['step_allreduce_s'] * 1e3:.2f} ms without")
PY
  "$bench" report job-sgd.json -o report.html >/dev/null
  grep -q "<h2>Data-parallel training</h2>.*<tr data-efficiency=\"[0-9.]*\"><td>mlp-nobn b24, $np ranks" report.html ||
    { echo "the report has no data-parallel row"; exit 1; }
  job "$bench" "${train[@]}" --batch 25
  [ "$code" = 2 ] && grep -q "the global batch 25 does not split evenly across $np ranks" stderr.txt ||
    { cat stderr.txt; echo "a batch of 25 was not refused (exit code $code)"; exit 1; }
  # Weak scaling: 25 images a rank, the baseline one rank's 25, the global batch 25 times the ranks.
  job "$bench" "${train[@]}" --scaling weak --batch 25 --json weak.json
  [ "$code" = 0 ] || { cat stdout.txt stderr.txt; exit 1; }
  python3 - weak.json "$np" <<'PY'
import json, sys
one, parallel = json.load(open(sys.argv[1]))["results"]
np = int(sys.argv[2])
p = parallel["params"]
assert one["params"]["batch"] == 25 and one["params"]["ranks"] == 1, one["params"]
assert p["scaling"] == "weak" and p["batch"] == 25 * np and p["batch_per_rank"] == 25 and p["baseline_batch"] == 25, p
assert abs(p["scaling_efficiency"] - p["images_per_s"] / (np * one["params"]["images_per_s"])) < 1e-9, p
print(f"weak scaling, {np} ranks of 25: efficiency {p['scaling_efficiency']:.2f}")
PY
  ;;
train-mixed)
  train=(train --data-parallel --model mlp-nobn --images 96 --epochs 2 --bucket-mib 1 --device cpu:threads=1 --batch 24)
  for precision in bf16 f16; do
    "$bench" "${train[@]}" --precision $precision --json one-$precision.json >one.txt 2>&1 || { cat one.txt; exit 1; }
    job "$bench" "${train[@]}" --precision $precision --json job-$precision.json
    [ "$code" = 0 ] || { cat stdout.txt stderr.txt; exit 1; }
    python3 - one-$precision.json job-$precision.json "$np" $precision <<'PY'
import json, sys
one, job, np = json.load(open(sys.argv[1]))["results"], json.load(open(sys.argv[2]))["results"], int(sys.argv[3])
precision = sys.argv[4]
assert all(r["status"] == "ok" and r["params"]["precision"] == precision for r in one + job), one + job
split, parallel = one[1], job[1]
assert parallel["params"]["ranks"] == np and parallel["params"]["dropout"] is True, parallel["params"]
# Each rank computes its shard's gradients in the low precision and rounds them there before the f32
# sum, where one process rounds the whole batch's: the steps differ by that rounding, about bf16's or
# f16's epsilon (2^-8, 2^-11) of a gradient, so the losses and variables within these.
rtol = {"bf16": 2e-3, "f16": 5e-4}[precision]
curve1, curve = split["params"]["loss_curve"], parallel["params"]["loss_curve"]
assert len(curve) == len(curve1) == 8 and curve[-1] < curve[0], curve
worst = max(abs(a - b) / abs(b) for a, b in zip(curve, curve1))
assert worst <= rtol, (worst, curve, curve1)
prints1, prints = split["params"]["variable_fingerprints"], parallel["params"]["variable_fingerprints"]
assert prints1.keys() == prints.keys(), (prints1.keys(), prints.keys())
scale = {k: v for k, v in prints.items() if k.startswith("loss_scale")}
assert len(scale) == {"bf16": 0, "f16": 2}[precision], prints.keys()
for name, (mixed, magnitude) in prints.items():
    if name in scale:
        assert prints1[name] == [mixed, magnitude], (name, prints1[name], prints[name])
    else:
        assert abs(magnitude - prints1[name][1]) <= rtol * magnitude, (name, prints1[name], prints[name])
        assert abs(mixed - prints1[name][0]) <= rtol * magnitude, (name, prints1[name], prints[name])
print(f"{np} ranks, {precision}: loss {curve[0]:.6f} -> {curve[-1]:.6f} over {len(curve)} steps, at most "
      f"{worst:.2e} from one process's (tolerance {rtol}); {len(prints)} variables within it")
PY
  done
  ;;
*) echo "unknown case $case"; exit 2 ;;
esac
head -n 20 stderr.txt
echo "$case, $np ranks: ok"
