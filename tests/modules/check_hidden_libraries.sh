#!/usr/bin/env bash
# check_hidden_libraries.sh BUILD BACKENDS: porta-bench of a module build, on this machine with every
# GPU and vendor library hidden from the loader (an empty file mounted over each, in a private mount
# namespace). It must start, exit 0 on `devices` with each hidden backend's reason, and run the quick
# suite on cpu and opencl:0 with their own kernels.
set -euo pipefail
build=$1 backends=" ${2//;/ } "
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
  echo "SKIPPED: hiding libraries needs root and unshare -m (a private mount namespace)"
  exit 77
fi
# The files the modules would load, as the loader resolves them, and OpenBLAS, which porta-bench
# loads itself.
vendor='lib\(cublas\|cudnn\|nvrtc\|nvJitLink\|amdhip64\|hsa-runtime64\|clblast\|dnnl\|openblas\)'
hidden=$({ ldd "$build"/lib/porta/*.so 2>/dev/null; ldconfig -p; } |
  sed -n "s/^\s*\($vendor[^ ]*\) .*=> \(\/[^ ]*\).*/\3/p" | xargs -r -n1 readlink -f | sort -u)
if [ -z "$hidden" ]; then echo "SKIPPED: this build links no GPU or vendor library to hide"; exit 77; fi
echo "hidden: $(echo "$hidden" | tr '\n' ' ')"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
unshare -m bash -c '
  set -euo pipefail
  for file in '"$(echo $hidden)"'; do mount --bind /dev/null "$file"; done
  "$0"/bench/porta-bench devices > "$1/devices.txt"
  "$0"/bench/porta-bench gemm --m 64 --n 64 --k 64 --device cpu,opencl:0 --impl native,vendor,openblas > "$1/gemm.txt"
  "$0"/bench/porta-bench run --suite quick --device cpu,opencl:0 --warmup 0 --min-samples 2 --min-time 0 \
    --out "$1/quick" > "$1/quick.txt"
' "$build" "$out"
cat "$out/devices.txt"
failed=0
# cuda links only the driver's API (its runtime is static): it loads without cuBLAS and cuDNN, whose
# module is the one left out. hip needs its runtime, hidden here.
if [[ $backends == *" cuda "* ]] && ! grep -qE "^  cuda: (no driver|no device)" "$out/devices.txt"; then
  echo "the cuda backend did not load without the vendor libraries"; failed=1
fi
if [[ $backends == *" hip "* ]] && ! grep -q "^  hip: not loaded: .*libporta-hip.so: .*libamdhip64" "$out/devices.txt"; then
  echo "porta-bench devices does not say why hip was not loaded"; failed=1
fi
cat "$out/gemm.txt"
# impl=vendor: unsupported, with the loader's words; the native rows ran.
for module in cpu-onednn opencl-clblast; do
  [ -e "$build/lib/porta/libporta-$module.so" ] || continue
  grep -q "libporta-$module.so: " "$out/gemm.txt" || { echo "no row says why $module was not loaded"; failed=1; }
done
[ "$(grep -c ' native .* ok$' "$out/gemm.txt")" = 2 ] || { echo "the native rows did not run"; failed=1; }
grep -q " ok" "$out/quick.txt" || { echo "the quick suite ran nothing:"; cat "$out/quick.txt"; failed=1; }
if grep -E "^\S+\s+(cpu|opencl:0)\s.*(failed|error)" "$out/quick.txt"; then failed=1; fi
tail -n 5 "$out/quick.txt"
exit $failed
