#!/usr/bin/env bash
# One call on the GPU machine with libraries and a wheel built elsewhere (the CPU machine has the
# same CUDA 13.0 nvcc, so nothing is compiled here and the device's minutes go to measuring):
#   NEW    libsageattn_capi.so of the tree under test (required)
#   OLD    libsageattn_capi.so of a reference tree: then its dense outputs must match NEW's
#          (compare_libs.py) and both are timed in alternation (bench_kernels, bench_quant)
#   WHEEL  a sageattention wheel for this machine's torch: the GPU pytest suite against it, and
#          `bench/sageattn_bench.py --suite $SUITES $BENCH_ARGS` (default: varlen)
# Steps (STEPS, comma-separated; default all): compare, test, sanitize, pytest, speed, bench.
# Everything lands in $OUT (or build/gpu-results); the last lines printed are the summary.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out"
steps=",${STEPS:-compare,test,sanitize,pytest,speed,bench},"
has() { [[ $steps == *",$1,"* ]]; }
: "${NEW:?NEW=path of the libsageattn_capi.so under test}"
summary=()
note() { summary+=("$1"); echo "== $1"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"

if has compare && [[ -n ${OLD:-} ]]; then
  timeout 600 python3 kernels/tests/compare_libs.py "$OLD" "$NEW" >"$out/compare.log" 2>&1
  note "compare (dense outputs, old vs new): $(tail -1 "$out/compare.log")"
fi
if has test; then
  SAGEATTN_CAPI=$NEW PYTHONUNBUFFERED=1 timeout ${TEST_TIMEOUT:-900} python3 kernels/tests/test_kernels.py \
    --json "$out/test.json" ${TEST_ARGS:-} >"$out/test.log" 2>&1
  note "test_kernels: $(grep -E '^[0-9]+ passed' "$out/test.log" | tail -1) ($(grep -c '^FAIL' "$out/test.log") FAIL lines)"
fi
if has sanitize; then
  for tool in memcheck racecheck; do
    SAGEATTN_CAPI=$NEW timeout 600 compute-sanitizer --tool $tool --print-limit 5 \
      python3 kernels/tests/test_kernels.py --tiny >"$out/sanitize-$tool.log" 2>&1
    note "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool.log" | tail -1); $(grep -E '^[0-9]+ passed' "$out/sanitize-$tool.log" | tail -1)"
  done
fi
if has pytest && [[ -n ${WHEEL:-} ]]; then
  rm -rf /tmp/sage-site && python3 -m pip install -q --no-deps --target /tmp/sage-site "$WHEEL"
  (cd /tmp && PYTHONPATH=/tmp/sage-site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 timeout 900 python3 -m pytest -q -m gpu \
     -p no:cacheprovider ${PYTEST_FILES:-"$OLDPWD/python/tests"}) >"$out/pytest-gpu.log" 2>&1
  note "pytest gpu: $(tail -1 "$out/pytest-gpu.log")"
fi
if has speed && [[ -n ${OLD:-} ]]; then
  for round in 1 2; do
    for lib in old new; do
      path=$OLD; [[ $lib == new ]] && path=$NEW
      SAGEATTN_CAPI=$path timeout 600 python3 bench/kernels/bench_kernels.py --json "$out/$lib-bench-r$round.json" \
        --paths "${SPEED_PATHS:-fp16_sm90,fp8_sm90,fp16}" --seqs "${SPEED_SEQS:-1024,8192}" --dims "${SPEED_DIMS:-128,64}" >"$out/$lib-bench-r$round.log" 2>&1
    done
  done
  python3 lab/variants/variants_summary.py "$out" old new >"$out/speed-summary.txt" 2>&1
  timeout 600 python3 bench/kernels/bench_quant.py --libs "old=$OLD,new=$NEW" --paths fp16,fp8 \
    --json "$out/quant.json" >"$out/quant.log" 2>&1
  note "speed: medians of 2 rounds, old vs new (speed-summary.txt); quantization: quant.log"
  cat "$out/speed-summary.txt" "$out/quant.log"
fi
if has bench && [[ -n ${WHEEL:-} ]]; then
  [[ -d /tmp/sage-site ]] || python3 -m pip install -q --no-deps --target /tmp/sage-site "$WHEEL"
  (cd /tmp && PYTHONPATH=/tmp/sage-site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 timeout 900 python3 "$OLDPWD/bench/sageattn_bench.py" \
     --suite "${SUITES:-varlen}" --rounds "${ROUNDS:-2}" ${BENCH_ARGS:-} --json "$out/bench.json" \
     --png "$out/bench.png") >"$out/bench.log" 2>&1
  note "bench: bench.log, bench.json, bench.png"
  tail -8 "$out/bench.log"
fi
printf '%s\n' "${summary[@]}"
