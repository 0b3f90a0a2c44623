#!/usr/bin/env bash
# Profiles one launch of the attention kernel with Nsight Compute (full set, SASS-level source
# counters) and leaves three things in $OUT: the report, every collected metric as CSV (raw
# page) and the per-SASS-instruction counters (source page: issue and stall samples per
# instruction). Summarise them with ncu_summary.py on any machine.
#   SAGEATTN_CAPI=<libsageattn_capi.so> bash lab/ncu/ncu_profile.sh NAME [profile_kernel.py args]
# e.g. `... ncu_profile.sh d128-4k --seq 4096`, `... ncu_profile.sh d64-16k --seq 16384 --head-dim 64`.
# KERNEL (a regex, default "attention") picks another kernel, e.g. KERNEL=quantize with
# `--stage quantize`.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
name=${1:?a name for the report}
shift
mkdir -p "$out"
ncu --set full --import-source no --kernel-name "regex:${KERNEL:-attention}" --launch-skip 2 --launch-count 1 \
  -f -o "$out/$name" python3 lab/ncu/profile_kernel.py "$@" >"$out/$name-ncu.log" 2>&1 ||
  { tail -20 "$out/$name-ncu.log"; exit 1; }
ncu --import "$out/$name.ncu-rep" --page raw --csv >"$out/$name-raw.csv" 2>&1
ncu --import "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/$name-sass.csv" 2>&1
ls -la "$out/$name"*
