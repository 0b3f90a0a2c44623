#!/usr/bin/env bash
# Phase durations of the Hopper kernel, measured with the SM clock inside one CTA (a build with
# -DSAGEATTN_SM90_TRACE=1), one GPU call: builds the traced library, runs profile_kernel.py for
# each configuration given (its arguments, quoted as one), and summarises with trace_summary.py.
#   bash lab/trace/sm90_trace.sh "--seq 16384" "--seq 4096" "--seq 16384 --head-dim 64"
# Env: OUT (logs; default build/gpu-results), EXTRA_FLAGS (more nvcc flags, e.g. a knob), SRC
# (the copy of kernels/ to build, e.g. an experiment's; default kernels).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out"
src=${SRC:-kernels}
name=$(basename "$(dirname "$src")")
[[ $name == . ]] && name=main
dir=build/variants/trace-$name
cmake -G Ninja -S "$src/tests/standalone" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
  -DSAGEATTN_ARCH_LIST=9.0a -DSAGEATTN_BUILD_CAPI=ON \
  -DCMAKE_CUDA_FLAGS="-DSAGEATTN_SM90_TRACE=1 ${EXTRA_FLAGS:-}" >"$out/trace-$name-configure.log"
cmake --build "$dir" -j 16 >"$out/trace-$name-build.log"
export SAGEATTN_CAPI=$dir/kernels/libsageattn_capi.so
i=0
for config in "$@"; do
  i=$((i + 1))
  # shellcheck disable=SC2086  # the configuration is a list of arguments
  python3 lab/ncu/profile_kernel.py --path fp8_sm90 --runs 4 $config \
    >"$out/trace-$name-$i.log" 2>&1
  echo "== $name: $config"
  python3 lab/trace/trace_summary.py "$out/trace-$name-$i.log"
done
