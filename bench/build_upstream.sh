#!/usr/bin/env bash
# bench/build_upstream.sh SRC DEST: builds upstream SageAttention from its source tree SRC (its
# setup.py, csrc/ and sageattention/) in a scratch copy, for this machine's GPU unless
# TORCH_CUDA_ARCH_LIST says otherwise, and installs its package as DEST/sageattention_upstream,
# importable beside ours (bench/mma_bench.py compares the two). Needs torch, setuptools and nvcc;
# no network.
set -euo pipefail
src=$1 dest=$2
arch=${TORCH_CUDA_ARCH_LIST:-$(python3 -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability())')}
work=$(mktemp -d)
cp -r "$src"/. "$work"
[[ -f $work/README.md ]] || : >"$work/README.md"  # setup.py reads it for its long description
start=$(date +%s)
if ! (cd "$work" && TORCH_CUDA_ARCH_LIST=$arch MAX_JOBS=${MAX_JOBS:-16} EXT_PARALLEL=${EXT_PARALLEL:-4} \
        python3 setup.py build_ext --inplace >build.log 2>&1); then
  tail -30 "$work/build.log"
  exit 1
fi
mkdir -p "$dest"
rm -rf "$dest/sageattention_upstream"
cp -r "$work/sageattention" "$dest/sageattention_upstream"
echo "upstream built for $arch in $(( $(date +%s) - start )) s: $dest/sageattention_upstream"
