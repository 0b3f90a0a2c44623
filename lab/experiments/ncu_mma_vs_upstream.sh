#!/usr/bin/env bash
# On the GPU machine: one Nsight Compute profile each of our mma.sync attention kernel and
# upstream SageAttention 2.2's for the same call (fp16 inputs, HND, b·s = 32k tokens, 4096/d
# heads, per_warp), to see where the 16-bit path's gap to upstream comes from. PATH_ (ours:
# a sageattn_ctypes variant, default fp16), SEQ (8192), D (64); upstream's source in .upstream
# (bench/build_upstream.sh builds it). Leaves NAME-raw.csv and NAME-sass.csv for ours and
# upstream in $OUT; lab/ncu/ncu_summary.py reads them anywhere.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out"
seq=${SEQ:-8192} d=${D:-64} path=${PATH_:-fp16}
export PATH=/usr/local/cuda/bin:$PATH
MAX_JOBS=12 bash bench/build_upstream.sh "${UPSTREAM:-.upstream}" /tmp/upstream-site >"$out/upstream-build.log" 2>&1 &
upstream=$!
cmake -G Ninja -S kernels/tests/standalone -B build/kernels -DCMAKE_BUILD_TYPE=Release \
  -DSAGEATTN_ARCH_LIST=9.0a -DSAGEATTN_BUILD_CAPI=ON >/dev/null 2>&1 &&
  cmake --build build/kernels -j 4 >"$out/ours-build.log" 2>&1 || { tail -30 "$out/ours-build.log"; exit 1; }
export SAGEATTN_CAPI=build/kernels/kernels/libsageattn_capi.so
OUT=$out bash lab/ncu/ncu_profile.sh "ours-$path-d$d-$seq" --path "$path" --seq "$seq" --head-dim "$d" >/dev/null
wait $upstream || { tail -20 "$out/upstream-build.log"; exit 1; }
cat >/tmp/upstream_call.py <<PY
import torch, sageattention_upstream as up
heads, batch = 4096 // $d, max(1, 32768 // $seq)
q, k, v = (torch.randn(batch, heads, $seq, $d, device="cuda", dtype=torch.float16) for _ in range(3))
for _ in range(4):
    up.sageattn_qk_int8_pv_fp16_cuda(q, k, v, tensor_layout="HND", qk_quant_gran="per_warp", pv_accum_dtype="fp32")
torch.cuda.synchronize()
PY
name="upstream-fp16-d$d-$seq"
PYTHONPATH=/tmp/upstream-site ncu --set full --import-source no --kernel-name "regex:qk_int_sv_f16" --launch-skip 2 \
  --launch-count 1 -f -o "$out/$name" python3 /tmp/upstream_call.py >"$out/$name-ncu.log" 2>&1 || { tail -20 "$out/$name-ncu.log"; exit 1; }
ncu --import "$out/$name.ncu-rep" --page raw --csv >"$out/$name-raw.csv" 2>&1
ncu --import "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/$name-sass.csv" 2>&1
rm -f "$out"/*.ncu-rep "$out"/*-ncu.log
for n in "ours-$path-d$d-$seq" "$name"; do python3 lab/ncu/ncu_summary.py "$out/$n" > "$out/$n-summary.txt" 2>&1; done
head -60 "$out/ours-$path-d$d-$seq-summary.txt" "$out/$name-summary.txt"
