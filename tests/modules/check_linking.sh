#!/usr/bin/env bash
# check_linking.sh LIBPORTA PROGRAM...: in a module build, libporta.so needs only the C and C++
# runtimes, each program needs no GPU or vendor library (readelf -d): those are the modules' to load,
# where the machine has them; and each module beside libporta (porta/) resolves every symbol.
set -euo pipefail
command -v readelf >/dev/null || { echo "SKIPPED: no readelf (binutils)"; exit 77; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
failed=0
libporta=$1; shift
echo "libporta.so needs: $(needed "$libporta" | tr '\n' ' ')"
extra=$(needed "$libporta" | grep -vE '^(libstdc\+\+|libm|libgcc_s|libc|libdl|ld-linux[-a-z0-9_]*)\.so' || true)
if [ -n "$extra" ]; then echo "libporta.so needs more than the C and C++ runtimes: $extra"; failed=1; fi
# Every module resolves all its symbols here (ldd -r), as dlopen's RTLD_NOW will demand.
for module in "$(dirname "$libporta")"/porta/*.so; do
  [ -e "$module" ] || continue
  undefined=$(ldd -r "$module" 2>&1 | grep -E "undefined symbol|not found" || true)
  if [ -n "$undefined" ]; then echo "$(basename "$module") does not resolve: $undefined"; failed=1; fi
done
vendor='cublas|cudnn|cudart|libcuda\.|nvrtc|amdhip|hsa-runtime|OpenCL|clblast|dnnl|openblas|tbb|gomp'
for program in "$@"; do
  echo "$(basename "$program") needs: $(needed "$program" | tr '\n' ' ')"
  bad=$(needed "$program" | grep -E "$vendor" || true)
  if [ -n "$bad" ]; then echo "$program needs a vendor library: $bad"; failed=1; fi
done
exit $failed
