#!/usr/bin/env python3
"""Runs one configuration a few times for a profiler (ncu) to pick up. Shapes as the benchmarks'
(b·s = 32k tokens, fp16, HND; 32 heads at d=128, 64 at d=64). --stage attention (default):
quantization once, then the attention kernel alone; --stage quantize: the quantization alone.

  ncu --kernel-name regex:attention --launch-skip 2 --launch-count 1 \\
      python3 lab/ncu/profile_kernel.py --path fp8_sm90 --seq 16384
  ncu --kernel-name regex:quantize --launch-skip 2 --launch-count 1 \\
      python3 lab/ncu/profile_kernel.py --stage quantize --path fp8 --seq 32768 --head-dim 64
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "tests"))
import sageattn_ctypes as sc  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", default="fp8_sm90")
    parser.add_argument("--seq", type=int, default=16384)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--stage", choices=("attention", "quantize"), default="attention")
    parser.add_argument("--no-smooth-k", action="store_true", help="quantize K without smoothing")
    args = parser.parse_args()
    lib = sc.load()
    heads = 32 if args.head_dim == 128 else 64
    b = max(1, 32768 // args.seq)
    q, k, v = (torch.randn(b, heads, args.seq, args.head_dim, device="cuda", dtype=torch.float16)
               for _ in range(3))
    o = torch.empty_like(q)
    call = sc.Call(lib, q, k, v, o, "HND", causal=args.causal, path=args.path,
                   smooth_k=not args.no_smooth_k)
    if args.stage == "quantize":
        for _ in range(args.runs):
            call.run(1)
    else:
        call.run(1)
        for _ in range(args.runs):
            call.run(2)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
