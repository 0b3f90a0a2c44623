#!/usr/bin/env python3
"""Runs one attention configuration a few times for a profiler (ncu) to pick up: quantization
once, then the attention kernel alone. Shapes as the benchmark's (b·s = 32k tokens, fp16, HND).

  ncu --kernel-name regex:attention --launch-skip 2 --launch-count 1 \\
      python3 kernels/tests/profile_kernel.py --path fp8_sm90 --seq 16384
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sageattn_ctypes as sc  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", default="fp8_sm90")
    parser.add_argument("--seq", type=int, default=16384)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()
    lib = sc.load()
    heads = 32 if args.head_dim == 128 else 64
    b = max(1, 32768 // args.seq)
    q, k, v = (torch.randn(b, heads, args.seq, args.head_dim, device="cuda", dtype=torch.float16)
               for _ in range(3))
    o = torch.empty_like(q)
    call = sc.Call(lib, q, k, v, o, "HND", causal=args.causal, path=args.path)
    call.run(1)
    for _ in range(args.runs):
        call.run(2)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
