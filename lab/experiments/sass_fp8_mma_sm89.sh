#!/usr/bin/env bash
# On the GPU machine (nvcc, cuobjdump): the fp8 mma.sync kernels compiled for sm_89 (Ada), per
# accumulation: their tensor instructions (QMMA: native e4m3) and registers, for the per-card model
# in docs/kernels.md. Usage: bash lab/experiments/sass_fp8_mma_sm89.sh (from the repository).
cd "$(dirname "$0")/../.." || exit 1
for f in kernels/src/instantiations/attention_fp8_f16_d*.cu; do
  n=$(basename $f .cu)
  nvcc -std=c++17 -O3 --expt-relaxed-constexpr -use_fast_math -I kernels/include -I kernels/src -cubin -arch sm_89 -o /tmp/$n.cubin $f 2>/dev/null
  echo "$n sm_89: $(cuobjdump -sass /tmp/$n.cubin | grep -oE '\b(QMMA|HMMA|IMMA)[A-Za-z0-9._]*' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  nvcc -std=c++17 -O3 --expt-relaxed-constexpr -use_fast_math -I kernels/include -I kernels/src -cubin -arch sm_89 -Xptxas -v -o /dev/null $f 2>&1 | grep -E "Used|spill" | tr -s ' ' | sed "s/^/$n: /"
done
