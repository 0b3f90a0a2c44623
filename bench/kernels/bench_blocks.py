#!/usr/bin/env python3
"""Where short sequences lose: a CTA's fixed cost against its per-key-block cost.

The attention kernel alone (inputs quantized beforehand), the query length fixed (so the number
of CTAs is fixed) and the key length growing, so each CTA runs more key blocks of 128. A
least-squares line through (key blocks, time per CTA) splits each CTA's time into a fixed part
(launch, set-up, pipeline fill and drain, epilogue) and a part per key block. Time per CTA is
the kernel time over the CTAs each SM runs (one at a time). Prints a table, writes JSON.

Usage: bench_blocks.py [--path fp8_sm90] [--qo 1024] [--kv 1024,2048,4096,8192,16384] [--json OUT]
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "tests"))
import sageattn_ctypes as sc  # noqa: E402
from bench_kernels import time_ms  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", default="fp8_sm90")
    parser.add_argument("--qo", type=int, default=1024)
    parser.add_argument("--kv", default="1024,2048,4096,8192,16384")
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--json")
    args = parser.parse_args()
    lib = sc.load()
    d, b, h, qo = 128, args.batch, args.heads, args.qo
    block_m, block_n = 128, 128  # the Hopper kernel's tile (attention_sm90.cuh)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    ctas = b * h * ((qo + block_m - 1) // block_m)
    per_sm = ctas / sms
    print(f"GPU: {torch.cuda.get_device_name()}, path {args.path}, d={d}, batch {b}, heads {h}, "
          f"{qo} queries: {ctas} CTAs, {per_sm:.2f} per SM")
    print(f"{'kv':>6} {'blocks':>6} | {'ms':>8} {'us/CTA':>8} {'TOPS':>6}")
    q = torch.randn(b, h, qo, d, device="cuda", dtype=torch.float16)
    rows = []
    for kv in map(int, args.kv.split(",")):
        k, v = (torch.randn(b, h, kv, d, device="cuda", dtype=torch.float16) for _ in range(2))
        o = torch.empty_like(q)
        call = sc.Call(lib, q, k, v, o, "HND", causal=False, path=args.path)
        call.run(1)  # quantize once
        ms = time_ms(lambda: call.run(2))
        blocks = (kv + block_n - 1) // block_n
        us_per_cta = ms * 1e3 / per_sm
        tops = 4 * b * h * qo * kv * d / ms / 1e9
        rows.append({"kv": kv, "blocks": blocks, "ms": ms, "us_per_cta": us_per_cta, "tops": tops})
        print(f"{kv:>6} {blocks:>6} | {ms:>8.3f} {us_per_cta:>8.2f} {tops:>6.0f}")
        del k, v, o, call
        torch.cuda.empty_cache()
    xs = [r["blocks"] for r in rows]
    ys = [r["us_per_cta"] for r in rows]
    slope, fixed = statistics.linear_regression(xs, ys)
    block_ops = 4 * block_m * block_n * d
    print(f"fit: {fixed:.2f} us fixed per CTA + {slope:.3f} us per key block "
          f"(a block alone: {block_ops / slope / 1e6 * sms:.0f} TOPS over {sms} SMs); at "
          f"{xs[0]} blocks the fixed part is {fixed / ys[0]:.0%} of a CTA's time")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "path": args.path, "rows": rows,
                       "fixed_us": fixed, "per_block_us": slope}, f, indent=1)


if __name__ == "__main__":
    main()
