#!/usr/bin/env bash
# Builds the kernel library once per variant of the Hopper kernel's knobs, checks each (quick
# accuracy suite, fp8_sm90 path) and times each (bench_kernels.py), all in one GPU call.
#   bash lab/variants/sm90_variants.sh "base:" "poly8:-DSAGEATTN_SM90_POLY_EXP2=8" ...
# Each argument is name:extra nvcc flags (its -D knobs reach the host reference's C++ too); a
# name "old" builds the sources in $OLD_SRC (a copy of kernels/, e.g. from
# `git archive HEAD kernels`) instead, to time a change against them, and
# "name@dir:flags" builds the copy of kernels/ in dir. Env: SEQS (default 1024,4096,16384), DIMS
# (head dims timed, default 128,64), TEST_ARGS (default --quick), OUT (results; default
# build/gpu-results), PATHS (the P·V paths to check and time, default fp8_sm90; e.g. fp16,fp8
# for the mma.sync kernels), ROUNDS (default 1: with N > 1
# every variant is built and checked first, then timed N times round-robin, and
# variants_summary.py prints each one's median over the rounds: clocks drift over a call by more
# than most changes gain, and round-robin spreads the drift over all variants alike), ACCURACY
# (set: accuracy_libs.py compares the variants against float64 on long inputs; ACCURACY_ARGS
# adds its options), NO_BENCH (set: no timing).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out"
seqs=${SEQS:-1024,4096,16384}
paths=${PATHS:-fp8_sm90}
objects=sageattn_sm90  # whose registers and stack are reported
[[ ,$paths, == *,fp16,* || ,$paths, == *,fp8,* ]] && objects="sageattn sageattn_fp8"
[[ ,$paths, == *_sm90,* && $objects != *sageattn_sm90* ]] && objects="$objects sageattn_sm90"
# Each variant: its name, its flags, the copy of kernels/ it builds and its build folder.
names=() flagses=() srcs=()
for variant in "$@"; do
  name=${variant%%:*}
  src=kernels/tests/standalone
  [[ $name == old ]] && src=${OLD_SRC:?OLD_SRC names the old sources}/tests/standalone
  if [[ $name == *@* ]]; then  # name@dir: the sources in dir (another copy of kernels/)
    src=${name#*@}/tests/standalone
    name=${name%%@*}
  fi
  names+=("$name") flagses+=("${variant#*:}") srcs+=("$src")
done
build_variant() {  # index: configure and build; the logs say what failed
  local name=${names[$1]} flags=${flagses[$1]} dir=build/variants/${names[$1]}
  cmake -G Ninja -S "${srcs[$1]}" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
    -DSAGEATTN_ARCH_LIST=9.0a -DSAGEATTN_BUILD_CAPI=ON -DCMAKE_CUDA_FLAGS="$flags" \
    -DCMAKE_CXX_FLAGS="$flags" >"$out/$name-configure.log" 2>&1 || return 1
  cmake --build "$dir" -j 16 >"$out/$name-build.log" 2>&1
}
# The variants build at once: most of a build is single-threaded nvcc processes, far fewer than
# the machine's cores late in each build.
start=$SECONDS
pids=()
for i in "${!names[@]}"; do
  build_variant "$i" &
  pids+=($!)
done
built=()
for i in "${!names[@]}"; do
  if wait "${pids[$i]}"; then
    built+=("$i")
  else
    echo "${names[$i]}: build failed"
    tail -30 "$out/${names[$i]}-configure.log" "$out/${names[$i]}-build.log" 2>/dev/null
  fi
done
echo "builds: $((SECONDS - start)) s"
libs=()  # name=library of each variant built
for i in "${built[@]}"; do
  name=${names[$i]}
  dir=build/variants/$name
  for o in $(for lib in $objects; do ls "$dir"/kernels/CMakeFiles/$lib.dir/src/instantiations/*.o; done); do
    echo "$name $(basename "$o" .cu.o): $(cuobjdump --dump-resource-usage "$o" 2>/dev/null | \
      grep -oE "REG:[0-9]+|STACK:[0-9]+" | paste -sd' ')"
  done
  export SAGEATTN_CAPI=$dir/kernels/libsageattn_capi.so
  if [[ $name != old ]]; then  # the old sources were checked when they were new
    PYTHONUNBUFFERED=1 timeout 300 python3 kernels/tests/test_kernels.py --paths "$paths" \
      ${TEST_ARGS:---quick} >"$out/$name-test.log" 2>&1
    echo "$name test: $(grep -E 'passed|worst' "$out/$name-test.log" | paste -sd' ')"
    grep FAIL "$out/$name-test.log" | head -5
  fi
  libs+=("$name=$dir/kernels/libsageattn_capi.so")
done
# ACCURACY=1: every variant against float64 on the same long inputs (accuracy_libs.py).
if [[ -n ${ACCURACY:-} ]]; then
  PYTHONUNBUFFERED=1 timeout 300 python3 kernels/tests/accuracy_libs.py "${libs[@]}" \
    --path "${paths%%,*}" ${ACCURACY_ARGS:-} --json "$out/accuracy.json" 2>&1 | tee "$out/accuracy.log"
fi
[[ -n ${NO_BENCH:-} ]] && exit 0
rounds=${ROUNDS:-1}
for round in $(seq 1 "$rounds"); do
  for entry in "${libs[@]}"; do
    name=${entry%%=*}
    suffix=$([[ $rounds -gt 1 ]] && echo "-r$round")
    SAGEATTN_CAPI=${entry#*=} PYTHONUNBUFFERED=1 timeout 300 python3 bench/kernels/bench_kernels.py \
      --paths "$paths" --seqs "$seqs" --dims "${DIMS:-128,64}" --json "$out/$name-bench$suffix.json" \
      >"$out/$name-bench$suffix.log" 2>&1
    echo "$name bench$suffix (d causal seq batch | flash cudnn, attn and e2e of each path | best attn/cudnn):"
    grep -E "^ *(64|128) " "$out/$name-bench$suffix.log"
  done
done
if [[ $rounds -gt 1 ]]; then
  python3 lab/variants/variants_summary.py "$out" "${libs[@]%%=*}"
fi
