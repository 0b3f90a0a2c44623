#!/usr/bin/env bash
# On the GPU machine: the universal wheel built with CUDA 12.4 against the one built with CUDA
# 13.0, the same sageattn() calls in one run (python/tests/compare_wheels.py, alternating
# rounds), then one Nsight Compute profile of each wheel's Hopper kernel on one call (d=128, 16k
# keys, causal or not: KERNEL_SEQ), to tell whether a gap is the kernel's code (ptxas) or
# something around it. The two wheels: WHEEL_12 and WHEEL_13 (default: build/gpu-wheels/*2100.124*
# and *2100.130*). Leaves compare.{txt,json} and ncu-*.csv in $OUT; the SASS side is
# lab/experiments/sass_by_toolkit.py, run anywhere.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out"
a=${WHEEL_12:-$(ls build/gpu-wheels/*-2100.124-*.whl)}
b=${WHEEL_13:-$(ls build/gpu-wheels/*-2100.130-*.whl)}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$out/gpu.txt"
python3 python/tests/compare_wheels.py --wheel "cu124=$a" --wheel "cu130=$b" \
  --seqs "${SEQS:-1024,4096,16384}" --rounds "${ROUNDS:-5}" --json "$out/compare.json" |
  tee "$out/compare.txt"
seq=${KERNEL_SEQ:-16384}
for pair in "cu124=$a" "cu130=$b"; do
  name=${pair%%=*} wheel=${pair#*=}
  site=/tmp/site-$name
  rm -rf "$site" && python3 -m pip install -q --no-deps --target "$site" "$wheel"
  for causal in False True; do
    PYTHONPATH=$site ncu --kernel-name regex:attention_sm90 --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section InstructionStats \
      --csv python3 -c "
import torch, sageattention
q, k, v = (torch.randn(2, 32, $seq, 128, device='cuda', dtype=torch.float16) for _ in range(3))
for _ in range(3):
    sageattention.sageattn(q, k, v, is_causal=$causal)
torch.cuda.synchronize()" >"$out/ncu-$name-causal$causal.csv" 2>"$out/ncu-$name-causal$causal.log"
  done
done
