#!/usr/bin/env python3
"""Runs two builds of the kernel library on the same random inputs and reports how far apart
their outputs are (relative L1), per case: a change that should not alter the arithmetic (the
quantization's rewrite, say) must give differences at the level of float summation order.

Usage: compare_libs.py A.so B.so [--lengths 130,300,1000,4097]
"""
import argparse
import itertools
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sageattn_ctypes as sc  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--lengths", default="130,300,1000,4097")
    args = parser.parse_args()
    libs = [sc.load(args.a), sc.load(args.b)]
    worst = 0.0
    worst_by_smoothing = {True: 0.0, False: 0.0}
    cases = 0
    for d, path, dtype, length, (q_gran, k_gran, smooth) in itertools.product(
            [64, 128], sc.available_paths(libs[0]), [torch.float16, torch.bfloat16],
            map(int, args.lengths.split(",")),
            [("per_warp", "per_block", True), ("per_block", "per_block", True),
             ("per_warp", "per_warp", False)]):
        q, k, v = (torch.randn(1, 4, length, d, device="cuda", dtype=dtype) for _ in range(3))
        k += 10 * torch.randn(1, 4, 1, d, device="cuda", dtype=dtype)  # per-channel offsets in K
        outs = []
        for lib in libs:
            o = torch.full_like(q, float("nan"))
            lse = torch.full((1, 4, length), float("nan"), device="cuda", dtype=torch.float32)
            sc.Call(lib, q, k, v, o, "HND", path=path, lse=lse, q_gran=q_gran, k_gran=k_gran,
                    smooth_k=smooth).run()
            outs.append((o.double(), lse.double()))
        torch.cuda.synchronize()
        rel = ((outs[0][0] - outs[1][0]).abs().sum() / outs[0][0].abs().sum()).item()
        lse_diff = (outs[0][1] - outs[1][1]).abs().max().item()
        worst = max(worst, rel)
        worst_by_smoothing[smooth] = max(worst_by_smoothing[smooth], rel)
        cases += 1
        if rel > 1e-4 or lse_diff > 1e-3:
            print(f"d{d} {path} {str(dtype)[6:]} {length} Q {q_gran} K {k_gran} smooth={smooth}: "
                  f"rel L1 {rel:.2e}, LSE {lse_diff:.2e}")
    print(f"{cases} cases, worst relative L1 between the two builds {worst:.2e} "
          f"(K smoothed: {worst_by_smoothing[True]:.2e}, not: {worst_by_smoothing[False]:.2e})")


if __name__ == "__main__":
    main()
