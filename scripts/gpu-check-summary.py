#!/usr/bin/env python3
"""The headline ratios of scripts/gpu-check, from porta-bench's results files (schema porta-bench/1).

For each problem timed by both providers: native speed over vendor speed (the vendor's median time
over porta's), with whether each row was verified. For the stream kernels: their bandwidth over the
device's own copy (the device-copy probe among the ceilings). A file that is missing or unreadable
is named, not fatal: the steps' lines above the summary say why it is missing.
"""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"{path}: no results ({e})")
        return None


def verified(row):
    if not row.get("verified"):
        return "not verified"
    return "verified" if row.get("oracle") in (None, "ref") else f"verified against {row['oracle']}"


def ratios(doc):
    rows = [r for r in doc.get("results", []) if r.get("status") == "ok" and r.get("median_s")]
    pairs = {}
    for r in rows:
        key = (r["device"], r["op"], r["workload"], r["dtype"], r.get("tf32", False))
        pairs.setdefault(key, {})[r["impl"]] = r
    for (device, op, workload, dtype, tf32), by_impl in sorted(pairs.items()):
        native, vendor = by_impl.get("native"), by_impl.get("vendor")
        if native is None or vendor is None or op in ("stream", "launch"):
            continue
        ratio = vendor["median_s"] / native["median_s"]
        print(f"  {device} {op} {workload} {dtype}{' tf32' if tf32 else ''}: native {native['median_s'] * 1e3:.3f} ms, "
              f"vendor {vendor['median_s'] * 1e3:.3f} ms, native/vendor speed {ratio:.2f} "
              f"({verified(native)}, {verified(vendor)})")
    unpaired = [r for r in doc.get("results", []) if r.get("status") != "ok"]
    for r in unpaired:
        print(f"  {r['device']} {r['op']} {r['workload']} {r['dtype']} {r['impl']}: {r['status']}: "
              f"{' '.join(str(r.get('reason', '')).split())[:160]}")


def bandwidth(doc):
    ceilings = {d.get("spec"): d.get("ceilings") or {} for d in doc.get("env", {}).get("devices", [])}
    for r in doc.get("results", []):
        if r.get("op") != "stream" or r.get("impl") != "native" or r.get("status") != "ok" or not r.get("gbs"):
            continue
        copy = ceilings.get(r["device"], {}).get("device_copy_gbs")
        share = f", {r['gbs'] / copy:.2f} of the device's own copy ({copy:.0f} GB/s)" if copy else \
            " (no device-copy probe on this device)"
        print(f"  {r['device']} stream {r['workload']}: {r['gbs']:.0f} GB/s{share}")


def main(paths):
    for path in paths:
        doc = load(path)
        if doc is None:
            continue
        print(f"{path.rsplit('/', 2)[-2] if path.endswith('results.json') else path.rsplit('/', 1)[-1]}:")
        ratios(doc)
        bandwidth(doc)


if __name__ == "__main__":
    main(sys.argv[1:])
