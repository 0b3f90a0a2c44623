#!/usr/bin/env python3
"""Runs the quantization of one configuration a few times for a profiler (ncu) to pick up.
Shapes as bench_quant.py's (b·s = 32k tokens, fp16, HND; 32 heads at d=128, 64 at d=64).

  ncu --kernel-name regex:quantize --launch-skip 2 --launch-count 1 \\
      python3 kernels/tests/profile_quant.py --path fp8 --seq 32768 --head-dim 64
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sageattn_ctypes as sc  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", default="fp8")
    parser.add_argument("--seq", type=int, default=32768)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()
    lib = sc.load()
    heads = 32 if args.head_dim == 128 else 64
    b = max(1, 32768 // args.seq)
    q, k, v = (torch.randn(b, heads, args.seq, args.head_dim, device="cuda", dtype=torch.float16)
               for _ in range(3))
    o = torch.empty_like(q)
    call = sc.Call(lib, q, k, v, o, "HND", path=args.path)
    for _ in range(args.runs):
        call.run(1)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
