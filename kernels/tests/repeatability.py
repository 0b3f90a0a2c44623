#!/usr/bin/env python3
"""Whether the same call gives the same output, call after call (and, given two builds of the
library, whether they agree): the quantization's statistics are summed with atomics in whatever
order the CTAs run, so repeats may differ in the last bits of K's mean, but nothing else in the
kernels depends on timing or on what a workspace held before. Prints, per shape and build, the
largest difference between repeats (and against the first build), in output ulps.

Usage: repeatability.py LIB.so [LIB2.so] [--repeats 8]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sageattn_ctypes as sc  # noqa: E402

SHAPES = [  # b, hq, hk, lq, lk, d, causal, path
    (2, 8, 2, 16, 1000, 128, True, "fp16_sm90"),
    (2, 8, 2, 16, 1000, 128, True, "fp8_sm90"),
    (2, 8, 8, 1000, 1000, 128, True, "fp16_sm90"),
    (2, 8, 2, 16, 1000, 128, True, "fp16"),
    (1, 8, 8, 4096, 4096, 64, False, "fp16_sm90"),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("libs", nargs="+")
    parser.add_argument("--repeats", type=int, default=8)
    args = parser.parse_args()
    libs = [sc.load(path) for path in args.libs]
    torch.manual_seed(0)
    for b, hq, hk, lq, lk, d, causal, path in SHAPES:
        q = torch.randn(b, hq, lq, d, device="cuda", dtype=torch.float16)
        k, v = (torch.randn(b, hk, lk, d, device="cuda", dtype=torch.float16) for _ in range(2))
        firsts = []
        for index, lib in enumerate(libs):
            outs = []
            for _ in range(args.repeats):
                o = torch.full_like(q, float("nan"))
                sc.Call(lib, q, k, v, o, "HND", causal=causal, path=path).run()
                torch.cuda.synchronize()
                outs.append(o.float())
            spread = max((x - outs[0]).abs().max().item() for x in outs)
            differing = max(((x != outs[0]).float().mean().item() for x in outs))
            against = (outs[0] - firsts[0]).abs().max().item() if firsts else 0.0
            firsts.append(outs[0])
            print(f"b{b} h{hq}/{hk} {lq}x{lk} d{d} causal={causal} {path} lib{index}: "
                  f"repeats differ by <= {spread:.3g} in {differing:.2%} of elements; "
                  f"against lib0 {against:.3g}", flush=True)


if __name__ == "__main__":
    main()
