#!/usr/bin/env bash
# Builds the kernel library once per variant of the quantization's knobs and times them all in
# one run of bench_quant.py (with the copy rate), on the GPU machine.
#   bash lab/variants/quant_variants.sh "base:" "mb4:-DSAGEATTN_QUANT_MIN_BLOCKS=4" ...
# Each argument is name:extra nvcc flags; a name "old" builds the committed sources in $OLD_SRC
# (a copy of kernels/, e.g. from `git archive HEAD kernels`) instead, and "name@dir:flags" the
# copy of kernels/ in dir.
# Env: SEQS (default 1024,4096,32768), OUT (default build/gpu-results), TEST=1 to run the quick
# accuracy suite on the first variant (with each FUSED mode), GAPS="5 10 20" to time each
# SAGEATTN_QUANT_GAP, FUSED="default 0 1" to time each SAGEATTN_QUANT_FUSED mode (the plain
# queue only, the fused queue wherever it can run), PATHS for bench_quant.py's --paths,
# NCU="name:path:seq:d ..." to profile variants with ncu.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out"
libs=()
mkdir -p build/variants
for variant in "$@"; do
  name=${variant%%:*}
  flags=${variant#*:}
  src=kernels/tests/standalone
  [[ $name == old ]] && src=${OLD_SRC:?OLD_SRC names the old sources}/tests/standalone
  if [[ $name == *@* ]]; then  # name@dir: the sources in dir (another copy of kernels/)
    src=${name#*@}/tests/standalone
    name=${name%%@*}
  fi
  cmake -G Ninja -S "$src" -B "build/variants/$name" -DCMAKE_BUILD_TYPE=Release \
    -DSAGEATTN_ARCH_LIST=9.0a -DSAGEATTN_BUILD_CAPI=ON -DCMAKE_CUDA_FLAGS="$flags" \
    >"build/variants/$name.configure.log" 2>&1 || { cat "build/variants/$name.configure.log"; exit 1; }
  libs+=("$name=build/variants/$name/kernels/libsageattn_capi.so")
done
start=$(date +%s)
for variant in "$@"; do
  name=${variant%%:*}
  name=${name%%@*}
  cmake --build "build/variants/$name" -j $(( 16 / $# + 1 )) >"build/variants/$name.build.log" 2>&1 &
done
wait
echo "build: $(( $(date +%s) - start )) s"
for variant in "$@"; do
  name=${variant%%:*}
  name=${name%%@*}
  [[ -f build/variants/$name/kernels/libsageattn_capi.so ]] || { tail -30 "build/variants/$name.build.log"; exit 1; }
  grep -E "spill" "build/variants/$name.build.log" | grep quantize | sed "s/^/$name: /" | head -4
done
if [[ -n ${TEST:-} ]]; then
  for mode in ${FUSED:-default}; do
    SAGEATTN_QUANT_FUSED=${mode/default/} SAGEATTN_CAPI=${libs[0]#*=} timeout 300 \
      python3 kernels/tests/test_kernels.py --quick >"$out/test-$mode.log" 2>&1
    echo "test ${libs[0]%%=*} (fused mode $mode): $(grep -E 'passed' "$out/test-$mode.log" | tail -1)"
    grep FAIL "$out/test-$mode.log" | head -5
  done
fi
for mode in ${FUSED:-default}; do
  for gap in ${GAPS:-default}; do
    echo "== SAGEATTN_QUANT_FUSED=$mode SAGEATTN_QUANT_GAP=$gap"
    SAGEATTN_QUANT_FUSED=${mode/default/} SAGEATTN_QUANT_GAP=${gap/default/} \
      python3 bench/kernels/bench_quant.py --libs "$(IFS=,; echo "${libs[*]}")" \
      --seqs "${SEQS:-1024,4096,32768}" --paths "${PATHS:-fp16,fp8}" \
      --json "$out/quant-$mode-$gap.json" 2>&1 | tee "$out/quant-$mode-$gap.log"
  done
done
for spec in ${NCU:-}; do
  IFS=: read -r name path seq d <<<"$spec"
  echo "== ncu $name $path seq $seq d $d"
  SAGEATTN_CAPI=build/variants/$name/kernels/libsageattn_capi.so timeout 120 ncu \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats -k regex:"quantize|column" --launch-skip 3 --launch-count 5 \
    python3 lab/ncu/profile_kernel.py --stage quantize --path "$path" --seq "$seq" --head-dim "$d" \
    >"$out/ncu-$name-$path-$seq-$d.txt" 2>&1
  grep -E "^  [a-z_:<>, 0-9A-Z]+\(|Duration|DRAM Throughput|L2 Hit Rate |Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued" \
    "$out/ncu-$name-$path-$seq-$d.txt" | sed 's/  */ /g' | cut -c1-110
done
