#!/usr/bin/env python3
"""Accuracy of several builds of the kernel library side by side, against float64 attention, on
the same fresh inputs: long sequences (1k to 32k keys), where an accumulator's precision over
many key blocks shows, on five kinds of input:

  normal    Q, K, V ~ N(0, 1)
  k_offset  K with a per-channel offset ~10x its std (what K's smoothing is for)
  sharp     Q scaled by 6: logits of std ~6, a peaked softmax
  rising    K scaled up along the sequence (x1 to x4): each row's max keeps moving, so the
            running rescale of O is exercised on most blocks
  rope      K with a per-channel offset ~2x its std, then K and Q rotated by rotary position
            embeddings (base 10000, channel i paired with i + d/2): the offset turns with the
            position, fastest in the first channels, so no one mean removes it

Per case and build: relative L1 and cosine over the whole output, and the worst element's error
in units of the output's RMS. Prints a table and writes JSON (--json).

Usage: accuracy_libs.py NAME=LIB.so [NAME=LIB.so ...] [--path fp8_sm90] [--lengths 1024,...]
       [--dims 128,64] [--causal] [--json FILE] [--seed N]
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sageattn_ctypes as sc  # noqa: E402

KINDS = ("normal", "k_offset", "sharp", "rising", "rope")


def make_inputs(kind, heads, length, d, gen):
    def randn():
        return torch.randn((1, heads, length, d), generator=gen, device="cuda", dtype=torch.float32)
    q, k, v = randn(), randn(), randn()
    if kind == "k_offset":
        k = k + 10 * torch.randn((1, 1, 1, d), generator=gen, device="cuda")
    elif kind == "rope":
        # (an offset of 2 std: turned by the rotation it spreads the logits by ~2, where
        # k_offset's 10 would make every row sharp)
        k = k + 2 * torch.randn((1, 1, 1, d), generator=gen, device="cuda")
        half = d // 2
        freq = 10000.0 ** (-torch.arange(half, device="cuda", dtype=torch.float32) / half)
        angle = torch.arange(length, device="cuda", dtype=torch.float32)[:, None] * freq
        cos, sin = angle.cos()[None, None], angle.sin()[None, None]

        def rotate(x):
            return torch.cat((x[..., :half] * cos - x[..., half:] * sin,
                              x[..., :half] * sin + x[..., half:] * cos), dim=-1)
        q, k = rotate(q), rotate(k)
    elif kind == "sharp":
        q = q * 6
    elif kind == "rising":
        k = k * torch.linspace(1, 4, length, device="cuda")[None, None, :, None]
    return tuple(x.half() for x in (q, k, v))


def reference(q, k, v, causal, chunk=2048):
    """float64 attention, in chunks of query rows (a 32k x 32k score matrix does not fit)."""
    q, k, v = (x.double() for x in (q, k, v))
    scale = 1 / math.sqrt(q.shape[-1])
    out = torch.empty_like(q)
    lq, lk = q.shape[2], k.shape[2]
    for start in range(0, lq, chunk):
        s = torch.matmul(q[:, :, start:start + chunk], k.transpose(-1, -2)) * scale
        if causal:
            rows = torch.arange(start, min(start + chunk, lq), device="cuda")[:, None]
            cols = torch.arange(lk, device="cuda")[None, :]
            s = s.masked_fill(cols > rows + (lk - lq), float("-inf"))
        out[:, :, start:start + chunk] = torch.matmul(torch.softmax(s, dim=-1), v)
    return out


def errors(out, ref):
    a, r = out.double().flatten(), ref.flatten()
    cos = (a @ r / (a.norm() * r.norm()).clamp_min(1e-300)).item()
    rel = ((a - r).abs().sum() / r.abs().sum().clamp_min(1e-300)).item()
    rms = r.pow(2).mean().sqrt().clamp_min(1e-300)
    worst = ((a - r).abs().max() / rms).item()
    return {"rel_l1": rel, "cos": cos, "worst_over_rms": worst}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("libs", nargs="+", help="NAME=path of libsageattn_capi.so")
    parser.add_argument("--path", default="fp8_sm90")
    parser.add_argument("--lengths", default="1024,4096,16384,32768")
    parser.add_argument("--dims", default="128,64")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--causal", action="store_true", help="also the causal cases")
    parser.add_argument("--json")
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    libs = [(spec.split("=", 1)[0], sc.load(spec.split("=", 1)[1])) for spec in args.libs]
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}, path {args.path}; per build: rel L1 (x1e-3) / worst element (x RMS)")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    rows = []
    names = [name for name, _ in libs]
    print(f"{'kind':9} {'d':>4} {'keys':>6} {'causal':>6}  " + "  ".join(f"{n:>15}" for n in names))
    for d in (int(x) for x in args.dims.split(",")):
        for length in (int(x) for x in args.lengths.split(",")):
            for causal in (False, True) if args.causal else (False,):
                for kind in KINDS:
                    q, k, v = make_inputs(kind, args.heads, length, d, gen)
                    ref = reference(q, k, v, causal)
                    row = {"kind": kind, "d": d, "keys": length, "causal": causal, "builds": {}}
                    cells = []
                    for name, lib in libs:
                        o = torch.full_like(q, float("nan"))
                        sc.Call(lib, q, k, v, o, "HND", causal=causal, path=args.path).run()
                        torch.cuda.synchronize()
                        if torch.isnan(o).any():
                            row["builds"][name] = {"unwritten_or_nan": True}
                            cells.append(f"{'NaN':>15}")
                            continue
                        e = errors(o, ref)
                        row["builds"][name] = e
                        cells.append(f"{e['rel_l1'] * 1e3:7.3f} / {e['worst_over_rms']:5.2f}")
                    rows.append(row)
                    print(f"{kind:9} {d:>4} {length:>6} {str(causal):>6}  " + "  ".join(cells),
                          flush=True)
                    del q, k, v, ref
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": seed, "path": args.path, "gpu": torch.cuda.get_device_name(),
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
