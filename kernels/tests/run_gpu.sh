#!/usr/bin/env bash
# One call on the GPU machine: build the kernel library (+ C API) for the GPU's architecture,
# report registers/spills and the SASS tensor instructions, run the correctness suite, then the
# benchmark. Results go to $OUT (or build/gpu-results).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out"
arch=${SAGEATTN_ARCH_LIST:-"8.0;8.9;9.0a"}
cmake -G Ninja -S kernels/tests/standalone -B build/kernels -DCMAKE_BUILD_TYPE=Release \
  -DSAGEATTN_ARCH_LIST="$arch" -DSAGEATTN_BUILD_CAPI=ON >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 1; }
start=$(date +%s)
cmake --build build/kernels -j 16 >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
for o in build/kernels/kernels/CMakeFiles/sageattn*.dir/src/instantiations/*.o; do
  cuobjdump --dump-resource-usage "$o" 2>/dev/null | grep -E "arch|REG" | paste - - | \
    sed "s|^|$(basename "$o" .cu.o): |" | grep -E "sm_90a|sm_80" | sed 's/Function.*REG/REG/' 
done | tee "$out/resources.txt"
cuobjdump --dump-sass -arch sm_90a build/kernels/kernels/libsageattn.a 2>/dev/null | \
  grep -oE "\b(IMMA|QMMA|HMMA|IGMMA|QGMMA|HGMMA|UTMALDG|USETMAXREG|LDSM|LDGSTS|STL|LDL)[A-Za-z0-9._]*" | sort | uniq -c | tee "$out/sass.txt"
export SAGEATTN_CAPI=build/kernels/kernels/libsageattn_capi.so
# A kernel that deadlocks (a barrier never completing) must end the run, not the lease.
PYTHONUNBUFFERED=1 timeout ${TEST_TIMEOUT:-1200} python3 kernels/tests/test_kernels.py --json "$out/test.json" ${TEST_ARGS:-} 2>&1 | tee "$out/test.log"
if [[ -n ${SANITIZE:-} ]]; then
  for tool in memcheck racecheck; do
    timeout 600 compute-sanitizer --tool $tool --print-limit 5 python3 kernels/tests/test_kernels.py --tiny ${SANITIZE_ARGS:-} 2>&1 | \
      tail -4 | sed "s/^/$tool: /" | tee -a "$out/sanitizer.log"
  done
fi
[[ -n ${NO_BENCH:-} ]] && exit 0
PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-1200} python3 bench/kernels/bench_kernels.py --json "$out/bench.json" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log"
