#!/usr/bin/env bash
# The final code: whole kernel suite, the wheel's GPU pytest, racecheck on the tiny cases.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s)
cmake -G Ninja -S kernels/tests/standalone -B build/kernels -DCMAKE_BUILD_TYPE=Release -DSAGEATTN_ARCH_LIST=9.0a \
  -DSAGEATTN_BUILD_CAPI=ON > /dev/null && cmake --build build/kernels -j 16 > /tmp/b.log 2>&1 || tail -20 /tmp/b.log
(TORCH_CUDA_ARCH_LIST=9.0a MAX_JOBS=8 CMAKE_BUILD_PARALLEL_LEVEL=8 python3 -m pip wheel -q --no-build-isolation --no-deps \
  -w /tmp/wheelhouse ./python > /tmp/w.log 2>&1 || tail -20 /tmp/w.log) &
export SAGEATTN_CAPI=build/kernels/kernels/libsageattn_capi.so
PYTHONUNBUFFERED=1 timeout 330 python3 kernels/tests/test_kernels.py > $OUT/test-kernels.log 2>&1
echo "kernel suite rc=$? $(( $(date +%s) - T0 )) s: $(grep -E 'passed|seed' $OUT/test-kernels.log | paste -sd' ')"
grep FAIL $OUT/test-kernels.log | head -5
wait
rm -rf /tmp/sage-site && python3 -m pip install -q --no-deps --target /tmp/sage-site /tmp/wheelhouse/sageattention-*.whl
(cd /tmp && PYTHONPATH=/tmp/sage-site PYTHONUNBUFFERED=1 timeout $((520 - $(date +%s) + T0)) python3 -m pytest -q -m gpu \
   "$OLDPWD/python/tests" -p no:cacheprovider 2>&1 | tail -8) | tee $OUT/pytest-gpu.log
echo "pytest done $(( $(date +%s) - T0 )) s"
timeout $((585 - $(date +%s) + T0)) compute-sanitizer --tool racecheck python3 kernels/tests/test_kernels.py --tiny --paths fp16 \
  > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?: $(grep -E 'hazard|passed' $OUT/racecheck.log | tail -2 | paste -sd' ')"
