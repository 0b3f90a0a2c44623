#!/usr/bin/env python3
"""What the sharp-tile guard costs (sageattn.h: sharp_threshold), on the GPU, kernel library only.

Ordinary inputs (N(0,1), nothing flagged): the forward call (quantization + attention + the
sharp kernel's launch over an empty worklist) with the guard against without it. Sharp inputs
(q, k of N(0,1)·300 on all heads, or on half of them): the guarded call, the unguarded one (fast
and wrong) and torch's SDPA (cuDNN), with each one's cosine to float64 on two heads of the first batch.
Times are medians over rounds that alternate the variants (CUDA events, 20 calls per sample).

Usage: bench_sharp.py [--json FILE] [--paths fp16_sm90,fp8_sm90]
       (env SAGEATTN_CAPI: path of libsageattn_capi.so)
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "tests"))
import sageattn_ctypes as sc  # noqa: E402
from test_kernels import metrics, reference  # noqa: E402

SHAPES = [(8, 16, 1024), (2, 16, 4096), (1, 16, 16384)]  # (batch, heads, tokens), d = 128


def timed(fn, calls=20):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / calls  # µs


def race(variants, rounds=7):
    """{name: median µs}, the variants alternating round by round after one warm-up call each."""
    for fn in variants.values():
        fn()
    samples = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            samples[name].append(timed(fn))
    return {name: statistics.median(values) for name, values in samples.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--paths", help="comma-separated P·V paths (default: all this GPU runs)")
    args = parser.parse_args()
    lib = sc.load()
    paths = args.paths.split(",") if args.paths else sc.available_paths(lib)
    gen = torch.Generator(device="cuda").manual_seed(1)
    print(f"GPU: {torch.cuda.get_device_name()}; d=128, non-causal, float16; µs per call (median)")
    rows = []
    print(f"{'path':<10} {'b x h x s':<14} {'inputs':<10} {'guard':>9} {'no guard':>9} {'ratio':>6} "
          f"{'SDPA':>9} {'cos guard':>10} {'cos none':>9} {'cos SDPA':>9}")
    for path in paths:
        for b, h, s in SHAPES:
            d = 128
            q, k, v = (torch.randn((b, h, s, d), generator=gen, device="cuda", dtype=torch.float16)
                       for _ in range(3))
            for inputs in ("ordinary", "half sharp", "all sharp"):
                qi, ki = q.clone(), k.clone()
                sharp_heads = {"ordinary": 0, "half sharp": h // 2, "all sharp": h}[inputs]
                qi[:, :sharp_heads] *= 300
                ki[:, :sharp_heads] *= 300
                o_on, o_off = torch.empty_like(q), torch.empty_like(q)
                on = sc.Call(lib, qi, ki, v, o_on, "HND", path=path)
                off = sc.Call(lib, qi, ki, v, o_off, "HND", path=path, sharp_threshold=None)
                variants = {"guard": on.run, "no guard": off.run}
                if inputs != "ordinary":
                    variants["sdpa"] = lambda qi=qi, ki=ki, v=v: F.scaled_dot_product_attention(qi, ki, v)
                times = race(variants)
                # Accuracy on the first batch's first and last heads (float64 on every head of 16k
                # tokens would not fit): both sharp, one of each, or both ordinary.
                pick = [0, h - 1]
                ref, _ = reference(qi[:1, pick], ki[:1, pick], v[:1, pick], "HND", False)
                cos_on, _ = metrics(o_on[:1, pick], ref)
                cos_off, _ = metrics(o_off[:1, pick], ref)
                cos_sdpa, _ = metrics(F.scaled_dot_product_attention(qi[:1, pick], ki[:1, pick], v[:1, pick]), ref)
                del ref
                row = {"path": path, "batch": b, "heads": h, "tokens": s, "head_dim": d, "inputs": inputs,
                       "us_guard": times["guard"], "us_no_guard": times["no guard"],
                       "us_sdpa": times.get("sdpa"), "cos_guard": cos_on, "cos_no_guard": cos_off,
                       "cos_sdpa": cos_sdpa}
                rows.append(row)
                sdpa = f"{times['sdpa']:9.1f}" if "sdpa" in times else f"{'':>9}"
                print(f"{path:<10} {f'{b}x{h}x{s}':<14} {inputs:<10} {times['guard']:9.1f} "
                      f"{times['no guard']:9.1f} {times['guard'] / times['no guard']:6.3f} {sdpa} "
                      f"{cos_on:10.6f} {cos_off:9.5f} {cos_sdpa:9.6f}", flush=True)
                del qi, ki, o_on, o_off, on, off
            del q, k, v
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
