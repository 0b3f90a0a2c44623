#!/usr/bin/env bash
# One GPU call: this tree's mma.sync kernels against upstream SageAttention 2.2 (every mode both
# have, d = 64 and 128, 1k-16k: bench/run_mma_suite.sh), then the FP8 quick suite at the given
# seeds on this tree's C API library and on a base tree's, to tell a change from an input draw.
#   bash lab/experiments/mma_upstream_and_seeds.sh OUT [BASE] [SEED...]
# BASE: a copy of kernels/ (default build/base/kernels, from `git archive main kernels`).
set -uo pipefail
out=${1:?OUT: where the results go}
base=${2:-build/base/kernels}
shift $(($# < 2 ? $# : 2))
seeds=("${@:-11}")
mkdir -p "$out"
for v in "base:$base" "tree:kernels"; do
  name=${v%%:*} src=${v#*:}
  (cmake -G Ninja -S "$src/tests/standalone" -B "build/v/$name" -DCMAKE_BUILD_TYPE=Release \
     -DSAGEATTN_ARCH_LIST=9.0a -DSAGEATTN_BUILD_CAPI=ON >"$out/$name-cfg.log" 2>&1 &&
   cmake --build "build/v/$name" -j 4 >"$out/$name-build.log" 2>&1; echo "$name lib built: $?") &
done
MODES="fp16 fp32,fp16 fp16+fp32,fp8 fp32+fp32,fp8 fp32+fp16" ARGS="--suite speed --seqs 1024,4096,16384" \
  OUT=$out bash bench/run_mma_suite.sh >"$out/suite.log" 2>&1
wait
for name in base tree; do
  for seed in "${seeds[@]}"; do
    SAGEATTN_CAPI=build/v/$name/kernels/libsageattn_capi.so timeout 100 python3 kernels/tests/test_kernels.py \
      --quick --paths fp8,fp8:fp32+fp16 --seed "$seed" >"$out/$name-$seed.log" 2>&1
    echo "$name seed $seed: $(grep -E 'worst|passed' "$out/$name-$seed.log" | paste -sd' ')"
    grep FAIL "$out/$name-$seed.log" | head -3
  done
done
