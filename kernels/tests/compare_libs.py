#!/usr/bin/env python3
"""Runs two builds of the kernel library on the same random inputs and reports how far apart
their outputs are (relative L1), per case: a change that should not alter the arithmetic (the
quantization's rewrite, say) must give differences at the level of float summation order.

--exact is for a change that should not alter the machine's arithmetic at all (files moved, code
shared, kernels split by role): every output element and LSE value of the two builds must be
the same bits, on every path and head dim the library has, causal or not, queries fewer than
keys, K with per-channel offsets, and sharp inputs that make the sharp-tile guard redo tiles.
K's smoothing is off there: its column sums are added up by float atomics in the quantization
(quantize/statistics.cuh), in whatever order the CTAs arrive, so two runs of one build differ
in the last bits with it. Exit 1 on any difference.

Usage: compare_libs.py A.so B.so [--lengths 130,300,1000,4097] [--exact]
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
    parser.add_argument("--exact", action="store_true", help="every output bit the same")
    args = parser.parse_args()
    libs = [sc.load(args.a), sc.load(args.b)]
    if args.exact:
        sys.exit(compare_exact(libs, [int(n) for n in args.lengths.split(",")]))
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


def compare_exact(libs, lengths):
    """Both builds on the same inputs; counts the cases whose O and LSE agree bit for bit."""
    torch.manual_seed(0)
    same = cases = skipped = 0
    kinds = ("normal", "k-offsets", "sharp")
    for path, d, dtype, causal, length, kind in itertools.product(
            sc.available_paths(libs[0]), [64, 96, 128, 192, 256], [torch.float16, torch.bfloat16],
            [False, True], lengths, kinds):
        q_len = max(1, length * 3 // 10) if causal else length  # causal: fewer queries than keys
        q = torch.randn(1, 4, q_len, d, device="cuda", dtype=dtype)
        k, v = (torch.randn(1, 4, length, d, device="cuda", dtype=dtype) for _ in range(2))
        if kind == "k-offsets":
            k += 10 * torch.randn(1, 4, 1, d, device="cuda", dtype=dtype)
        elif kind == "sharp":
            q *= 30  # logits far past the guard's threshold: its tiles are redone in 16 bits
        outs = []
        for lib in libs:
            o = torch.full_like(q, float("nan"))
            lse = torch.full((1, 4, q_len), float("nan"), device="cuda", dtype=torch.float32)
            try:
                sc.Call(lib, q, k, v, o, "HND", causal=causal, path=path, lse=lse,
                        smooth_k=False).run()
            except RuntimeError as e:  # a head dim this path does not have
                outs.append(str(e))
                continue
            outs.append((o.view(torch.int16).clone(), lse.view(torch.int32).clone()))
        torch.cuda.synchronize()
        if isinstance(outs[0], str) or isinstance(outs[1], str):
            if outs[0] != outs[1]:
                print(f"{path} d{d} {length}: one build refused ({outs[0]!r} / {outs[1]!r})")
                cases += 1
            else:
                skipped += 1
            continue
        cases += 1
        o_diff = (outs[0][0] != outs[1][0]).sum().item()
        lse_diff = (outs[0][1] != outs[1][1]).sum().item()
        if o_diff == 0 and lse_diff == 0:
            same += 1
        else:
            print(f"DIFFERENT {path} d{d} {str(dtype)[6:]} causal={causal} {q_len}x{length} {kind}: "
                  f"{o_diff} of {q.numel()} outputs, {lse_diff} of {q_len * 4} LSE values")
    print(f"{same} of {cases} cases bit-identical ({skipped} combinations a path does not have)")
    return 0 if same == cases and cases > 0 else 1


if __name__ == "__main__":
    main()
