#!/usr/bin/env bash
# The sharp kernel: old (HEAD) vs new (masked split, max over raw scores) vs new + headroom 8.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
build() {  # name, source dir (a kernels/ copy), extra flags
  cmake -G Ninja -S "$2/tests/standalone" -B build/sv/$1 -DCMAKE_BUILD_TYPE=Release -DSAGEATTN_ARCH_LIST=9.0a \
    -DSAGEATTN_BUILD_CAPI=ON -DCMAKE_CUDA_FLAGS="$3" -DCMAKE_CXX_FLAGS="$3" > /dev/null 2>&1 &&
  cmake --build build/sv/$1 -j 16 > $OUT/$1-build.log 2>&1 || { tail -20 $OUT/$1-build.log; }
}
build old .gpu/oldk "" & build new kernels "" & wait
build head8 kernels "-DSAGEATTN_SHARP_HEADROOM=8"
for v in new head8; do
  SAGEATTN_CAPI=build/sv/$v/kernels/libsageattn_capi.so timeout 240 python3 kernels/tests/test_kernels.py --quick \
    --paths fp16,fp16_sm90,fp8_sm90 > $OUT/$v-test.log 2>&1
  echo "$v: $(grep -E 'passed' $OUT/$v-test.log | paste -sd' ')"; grep FAIL $OUT/$v-test.log | head -5
done
for v in old new head8 old2; do
  lib=build/sv/${v%2}/kernels/libsageattn_capi.so
  SAGEATTN_CAPI=$lib timeout 120 python3 bench/kernels/bench_sharp.py --paths fp16_sm90,fp16 --json $OUT/$v-bench.json > $OUT/$v-bench.log 2>&1
  echo "== $v"; grep -E "sharp" $OUT/$v-bench.log
done
