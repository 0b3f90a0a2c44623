#!/usr/bin/env bash
# On the GPU machine: bench/mma_bench.py's comparison of the mma.sync kernels with upstream
# SageAttention 2.2, both built here for this GPU. UPSTREAM: upstream's source tree (its
# setup.py, csrc/, sageattention/; default .upstream). Results in $OUT (or build/gpu-results):
# mma.json, mma.png, mma.log and the two build logs. ARGS: more arguments for mma_bench.py;
# MODES: its --modes (names with spaces: "fp16 fp32,fp16 fp16+fp32").
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=${OUT:-build/gpu-results}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
arch=$(python3 -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability())')
# Upstream and ours compile side by side (16 cores); ours for sm_90a on Hopper, so that sageattn
# there is what users get, and its fp8 and fp16 mma.sync kernels are in it too.
MAX_JOBS=8 bash bench/build_upstream.sh "${UPSTREAM:-.upstream}" /tmp/upstream-site >"$out/upstream-build.log" 2>&1 &
upstream=$!
ours_arch=$arch
[[ $arch == 9.0 ]] && ours_arch=9.0a
start=$(date +%s)
rm -rf /tmp/mma-wheel && TORCH_CUDA_ARCH_LIST=$ours_arch MAX_JOBS=8 python3 -m pip wheel -q --no-build-isolation \
  --no-deps -w /tmp/mma-wheel ./python >"$out/ours-build.log" 2>&1 || { tail -30 "$out/ours-build.log"; exit 1; }
echo "ours built for $ours_arch in $(( $(date +%s) - start )) s"
rm -rf /tmp/mma-site && python3 -m pip install -q --no-deps --target /tmp/mma-site /tmp/mma-wheel/sageattention-*.whl
wait $upstream || { cat "$out/upstream-build.log"; }
tail -1 "$out/upstream-build.log"
cd /tmp && PYTHONPATH=/tmp/mma-site:/tmp/upstream-site PYTHONUNBUFFERED=1 python3 -W ignore \
  "$repo/bench/mma_bench.py" --json "$out/mma.json" --png "$out/mma.png" ${MODES:+--modes "$MODES"} ${ARGS:-} 2>&1 | tee "$out/mma.log"
