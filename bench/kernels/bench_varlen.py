#!/usr/bin/env python3
"""Where a packed (varlen) call's time goes, against the same sequences padded to the longest
(what callers without varlen run), and against a dense batch of that padded shape filled with
random values (the tensor cores run faster on the padding's zeros, which flatters the padded
call's TOPS): the quantization and the attention kernel timed apart, per
library (--libs name=path,...: builds compared in one run), P·V path and causal or not. The
sequences are bench/sageattn_bench.py's varlen suite's: 64, lengths drawn uniformly from
128-8192 with seed 0, 32 heads at d=128, fp16, NHD. TOPS count the sequences' work for the
packed call and the padded batch's for the padded and dense ones.

Usage: bench_varlen.py [--libs name=path,...] [--paths fp16_sm90,fp8_sm90] [--json OUT]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "tests"))
import sageattn_ctypes as sc  # noqa: E402
from bench_kernels import time_ms  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--libs", help="name=path,... (default: the library of $SAGEATTN_CAPI)")
    parser.add_argument("--paths", default="fp16_sm90,fp8_sm90")
    parser.add_argument("--json")
    args = parser.parse_args()
    libs = ({n: sc.load(p) for n, p in (item.split("=", 1) for item in args.libs.split(","))}
            if args.libs else {"lib": sc.load()})
    lengths = torch.randint(128, 8192 + 1, (64,), generator=torch.Generator().manual_seed(0)).tolist()
    top, heads, d = max(lengths), 32, 128
    cu = torch.tensor([0] + [sum(lengths[:i + 1]) for i in range(len(lengths))], dtype=torch.int32, device="cuda")
    q, k, v = (torch.randn(sum(lengths), heads, d, device="cuda", dtype=torch.float16) for _ in range(3))
    padded = [torch.zeros(len(lengths), top, heads, d, device="cuda", dtype=torch.float16) for _ in range(3)]
    for t, p in zip((q, k, v), padded):
        for i, n in enumerate(lengths):
            p[i, :n] = t[cu[i]:cu[i] + n]
    dense = [torch.randn_like(p) for p in padded]
    print(f"GPU: {torch.cuda.get_device_name()}; {len(lengths)} sequences of {min(lengths)}-{top} tokens "
          f"({sum(lengths)} in all), {heads} heads, d={d}")
    print(f"{'lib':>6} {'path':>10} {'causal':>6} {'call':>7} | {'quant ms':>9} {'attn ms':>9} {'e2e ms':>9} | "
          f"{'attn TOPS':>9} {'e2e TOPS':>9}")
    rows = []
    for name, lib in libs.items():
        for path in args.paths.split(","):
            for causal in (False, True):
                work = sum(4 * heads * n * n * d for n in lengths) / (2 if causal else 1)
                padded_work = 4 * len(lengths) * heads * top * top * d / (2 if causal else 1)
                o = torch.empty_like(q)
                po = torch.empty_like(padded[0])
                calls = {"varlen": (sc.Call(lib, q, k, v, o, "NHD", causal=causal, path=path,
                                            varlen=(cu, cu, top, top)), work),
                         "padded": (sc.Call(lib, *padded, po, "NHD", causal=causal, path=path), padded_work),
                         "dense": (sc.Call(lib, *dense, po, "NHD", causal=causal, path=path), padded_work)}
                for kind, (call, flops) in calls.items():
                    call.run(1)
                    ms = {w: time_ms(lambda: call.run(i)) for w, i in (("quant", 1), ("attn", 2), ("e2e", 0))}
                    row = {"lib": name, "path": path, "causal": causal, "call": kind, "ms": ms,
                           "attn_tops": flops / ms["attn"] / 1e9, "e2e_tops": flops / ms["e2e"] / 1e9}
                    rows.append(row)
                    print(f"{name:>6} {path:>10} {str(causal):>6} {kind:>7} | {ms['quant']:>9.3f} {ms['attn']:>9.3f} "
                          f"{ms['e2e']:>9.3f} | {row['attn_tops']:>9.0f} {row['e2e_tops']:>9.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "lengths": lengths, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
