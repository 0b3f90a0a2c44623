#!/usr/bin/env bash
# Whether a change that should leave the kernels' arithmetic alone (files moved, code shared,
# a kernel split by role) did: one call on the GPU machine against a copy of the tree before it.
#   1. both libraries built for sm_90a (every path's kernels, the GPU's code) and their machine
#      code compared object by object (sass_canonical.py compare-builds; sass_same.sh does this
#      on any machine, per unit and architecture). Reported, not decisive: "same" or
#      "equivalent" proves a unit unchanged, while "different" can still be the same
#      computation (ptxas folds a negated predicate one way or the other), which step 2 tells;
#   2. the outputs, the verdict: compare_libs.py --exact (every O and LSE bit, every path and
#      head dim, causal, K offsets, sharp inputs that the guard redoes);
#   3. the tree's kernel suite (test_kernels.py --quick) and both libraries' speed, round-robin
#      (bench_kernels.py at d=64 and 128; NO_BENCH=1 leaves it out, BENCH_ARGS adds its options,
#      e.g. "--paths fp8_sm90,fp16_sm90").
# The copy before: `mkdir -p build/base && git archive REV kernels | tar -x -C build/base`, carried
# to the GPU machine (it has no history). Results under $OUT (or build/unchanged).
#   bash kernels/tests/check_unchanged.sh build/base
set -uo pipefail
cd "$(dirname "$0")/../.."
base=${1:?usage: check_unchanged.sh BASE_DIR (a copy of the tree before, holding kernels/)}
[[ -d $base/kernels ]] || { echo "check_unchanged.sh: no $base/kernels" >&2; exit 2; }
out=${OUT:-build/unchanged}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
status=0
for side in base tree; do
  src=.
  [[ $side == base ]] && src=$base
  cmake -G Ninja -S "$src/kernels/tests/standalone" -B "build/unchanged-$side" -DCMAKE_BUILD_TYPE=Release \
    -DSAGEATTN_ARCH_LIST=9.0a -DSAGEATTN_BUILD_CAPI=ON >"$out/configure-$side.log" 2>&1 &&
    cmake --build "build/unchanged-$side" -j "$(nproc)" >"$out/build-$side.log" 2>&1 ||
    { tail -30 "$out/configure-$side.log" "$out/build-$side.log"; exit 1; }
done
lib() { echo "build/unchanged-$1/kernels/libsageattn_capi.so"; }

python3 lab/sass/sass_canonical.py compare-builds build/unchanged-base build/unchanged-tree \
  >"$out/sass.txt" 2>&1
echo "machine code: $(grep -c '^same' "$out/sass.txt") objects the same, $(grep -c '^equivalent' "$out/sass.txt")" \
  "equivalent, $(grep -c '^DIFFERENT' "$out/sass.txt") different ($out/sass.txt)"

python3 kernels/tests/compare_libs.py "$(lib base)" "$(lib tree)" --exact 2>&1 | tee "$out/outputs.txt"
((PIPESTATUS[0] == 0)) || status=1
SAGEATTN_CAPI=$(lib tree) timeout 900 python3 kernels/tests/test_kernels.py --quick 2>&1 | tail -15 | tee "$out/suite.txt"
((PIPESTATUS[0] == 0)) || status=1
verdict() { echo "check_unchanged: $([[ $status == 0 ]] && echo "unchanged" || echo "CHANGED (above)")"; }
[[ -n ${NO_BENCH:-} ]] && { verdict; exit $status; }
for round in 1 2; do
  for side in base tree; do
    echo "== $side, round $round"
    SAGEATTN_CAPI=$(lib "$side") python3 bench/kernels/bench_kernels.py --seqs 1024,4096,16384 \
      --json "$out/bench-$side-$round.json" ${BENCH_ARGS:-}
  done
done 2>&1 | tee "$out/bench.txt"
verdict
exit $status
