#!/usr/bin/env python3
"""Where INT8 Q·Kᵀ loses sharp rows, and what finer scale groups or a second INT8 term would
change: a float64 model of the kernels' Q·Kᵀ quantization on the CPU (docs/kernels.md, "Sharp
attention").

The kernels' accuracy on sharp rows is set by Q·Kᵀ alone (the measured per_warp, per_block and
FP8 P·V columns agree to 0.001 at every scale), so the model keeps only that step: K smoothed by
its per-channel mean, Q and K rounded to INT8 with one scale per group of rows (the group's
largest |value| / 127, ties to even), the integer dot products dequantized, then softmax and P·V
exact. It is checked against the kernels' measured cosines (`--check`, the per_warp and per_block
columns of the sharpness table) before it is used to answer what the kernels do not have:

  per_thread   the original's finer groups on Hopper: a Q scale per thread's rows of a 16-row
               warp tile (rows i and i + 8), a K scale per thread's columns of a 64-key block
               (keys j with the same (j mod 8) / 2: 16 keys)
  per_token    one scale per row of Q and per key of K: the finest a scalar scale can be
  int8 x2      Q (or Q and K) as an INT8 value plus an INT8 residual (q ≈ s·(q8 + r8/127)): two
               (three) INT8 Q·Kᵀ per block, the error of the rounding squared
  16-bit       Q·Kᵀ on the callers' fp16 values with fp32 sums, as a 16-bit kernel computes it:
               what a guard routing sharp heads away from INT8 would give

    build/torch-venv/bin/python lab/models/sharpness_model.py [--check] [--json out.json]
"""
import argparse
import glob
import json
import math
import os
import sys

import torch

# The kernels' groups: per_block Q = one 64-row CTA tile, per_warp = 16 rows, K per_block = 64 keys.
KERNEL_SCHEMES = {
    "per_warp Q, per_block K (sageattn)": ("warp", "block"),
    "per_block Q, per_block K": ("block", "block"),
}
MODEL_SCHEMES = {
    "per_thread Q and K": ("thread_q", "thread_k"),
    "per_token Q and K": ("token", "token"),
    "int8 x2 Q, per_block K": ("warp2", "block"),
    "int8 x2 Q and K": ("warp2", "block2"),
    "16-bit Q·Kᵀ": ("fp16", "fp16"),
}
# The kernels' runs this model is checked against: `bench/sageattn_bench.py --suite sharpness`
# on the GPU machine, whose JSON goes under bench/results/ (each run's README has the whole
# command); the newest run whose sharpness rows have the quantized kernels without the guard,
# per_warp and per_block Q (MEASURED_COLUMNS, KERNEL_SCHEMES' two, in order), is the one used.
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "results")
MEASURED_COLUMNS = ("no guard", "per_block Q, no guard")


def measured_run(results=RESULTS):
    """The newest benchmark JSON under `results` (folders named by date first) with sharpness
    rows that have MEASURED_COLUMNS; None if there is none."""
    for path in sorted(glob.glob(os.path.join(results, "*", "*.json")), reverse=True):
        try:
            with open(path) as f:
                rows = json.load(f).get("sharpness")
        except (OSError, ValueError, AttributeError):
            continue
        if rows and all(c in r.get("cosine", {}) for r in rows for c in MEASURED_COLUMNS):
            return path
    return None


def measured(path=None):
    """scale a -> the measured cosines of KERNEL_SCHEMES, from `path` or the newest run."""
    path = path or measured_run()
    if path is None:
        raise SystemExit(f"sharpness_model: no run with sharpness rows under {RESULTS}")
    with open(path) as f:
        rows = json.load(f)["sharpness"]
    return {r["scale"]: tuple(r["cosine"][c] for c in MEASURED_COLUMNS) for r in rows}


def group_ids(kind, n):
    """Which scale each of n rows uses (rows with one id share a scale)."""
    i = torch.arange(n)
    if kind == "warp":
        return i // 16
    if kind == "block":
        return i // 64
    if kind == "token":
        return i
    if kind == "thread_q":  # rows i and i + 8 of each 16-row slab
        return (i // 16) * 8 + i % 8
    if kind == "thread_k":  # a thread's column pairs of an 8-key atom, across a 64-key block
        return (i // 64) * 4 + (i % 8) // 2
    raise ValueError(kind)


def quantize(x, kind):
    """x [heads, rows, d] float64 -> its dequantized INT8 value under the grouping `kind` (with
    a trailing "2": plus an INT8 residual)."""
    ids = group_ids(kind.removesuffix("2"), x.shape[1])
    groups = int(ids.max()) + 1
    row_max = x.abs().amax(dim=-1)  # [heads, rows]
    amax = torch.zeros(x.shape[0], groups, dtype=x.dtype).scatter_reduce(1, ids.expand_as(row_max), row_max, "amax")
    scale = (amax / 127.0).clamp_min(1e-300)[:, ids].unsqueeze(-1)
    q8 = torch.round(x / scale)
    if not kind.endswith("2"):
        return q8 * scale
    # A second INT8 term for what the first left: its step is the first's / 127.
    residual = x - q8 * scale
    return q8 * scale + torch.round(residual / (scale / 127.0)).clamp(-127, 127) * (scale / 127.0)


def guard_bounds(q, smoothed, logits, sm_scale):
    """What a guard in the quantization could know of a head's largest logit, over the largest
    logit itself (range over heads): the elements' bound (largest |q| x largest |k| x d, what the
    INT8 scales give) and the rows' (largest |q_i| x largest |k_j|, Cauchy-Schwarz)."""
    largest = logits.abs().amax(dim=(1, 2))
    d = q.shape[-1]
    elements = q.abs().amax(dim=(1, 2)) * smoothed.abs().amax(dim=(1, 2)) * d * sm_scale / largest
    rows = q.norm(dim=-1).amax(dim=1) * smoothed.norm(dim=-1).amax(dim=1) * sm_scale / largest
    return {"elements": [elements.min().item(), elements.max().item()],
            "row_norms": [rows.min().item(), rows.max().item()]}


def scheme_output(q, k, smoothed, v, q_kind, k_kind, sm_scale):
    if q_kind == "fp16":  # fp16 values, fp32 products and sums; no smoothing needed
        logits = (q.float() @ k.float().transpose(-1, -2)).double()
    else:
        logits = quantize(q, q_kind) @ quantize(smoothed, k_kind).transpose(-1, -2)
    return torch.softmax(logits * sm_scale, dim=-1) @ v


def cosine(a, b):
    return torch.nn.functional.cosine_similarity(a.flatten(), b.flatten(), dim=0).item()


def model(scales, seq=1024, heads=8, d=128, seed=1):
    rows = []
    sm_scale = 1.0 / math.sqrt(d)
    for a in scales:
        # Each scale's own draw, the same whatever other scales the call asks for.
        gen = torch.Generator().manual_seed(seed * 1_000_003 + round(a * 1000))
        q, k, v = (torch.randn(heads, seq, d, generator=gen, dtype=torch.float64) for _ in range(3))
        # The callers' fp16 tensors: the reference and every scheme start from the same values.
        q, k, v = ((q * a).half().double(), (k * a).half().double(), v.half().double())
        logits = q @ k.transpose(-1, -2) * sm_scale
        probs = torch.softmax(logits, dim=-1)
        ref = probs @ v
        smoothed = k - k.mean(dim=1, keepdim=True)  # softmax is unchanged by it; the scales are not
        row = {"scale": a, "max_logit": logits.abs().max().item(),
               "median_top_probability": probs.amax(dim=-1).median().item(), "cosine": {},
               "bound_over_max_logit": guard_bounds(q, smoothed, logits, sm_scale)}
        for name, (q_kind, k_kind) in {**KERNEL_SCHEMES, **MODEL_SCHEMES}.items():
            out = scheme_output(q, k, smoothed, v, q_kind, k_kind, sm_scale)
            row["cosine"][name] = cosine(out, ref)
        rows.append(row)
    return rows


def print_table(rows):
    names = list(rows[0]["cosine"])
    print("| a | largest logit | median top probability | " + " | ".join(names) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in names) + " |")
    for r in rows:
        cells = " | ".join(f"{r['cosine'][n]:.5f}" for n in names)
        print(f"| {r['scale']:g} | {r['max_logit']:.0f} | {r['median_top_probability']:.3g} | {cells} |")
    print("\nguard bounds over the largest logit (min-max over heads): elements' | rows' norms")
    for r in rows:
        b = r["bound_over_max_logit"]
        print(f"a={r['scale']:<4g} {b['elements'][0]:5.1f}-{b['elements'][1]:5.1f} | {b['row_norms'][0]:.2f}-{b['row_norms'][1]:.2f}")


# How close the model must come: to 0.001 while the largest logit is below 500; beyond, where
# rows are one-hot and each cosine rests on a few runners-up per row, two draws of the inputs
# (the kernels' and the model's are different draws) differ by up to 0.003, so to 0.004.
TOLERANCE = {"below 500": 0.001, "one-hot": 0.004}


def tolerance_for(row, tolerance=None):
    if tolerance is not None:
        return tolerance
    return TOLERANCE["below 500" if row["max_logit"] < 500 else "one-hot"]


def check(rows, tolerance=None):
    """The model against the kernels' measured cosines: returns the largest gap beyond its
    tolerance (0 when every gap is within), printing each comparison."""
    worst = 0.0
    runs = measured()
    for r in rows:
        if r["scale"] not in runs:
            continue
        allowed = tolerance_for(r, tolerance)
        for name, cos in zip(KERNEL_SCHEMES, runs[r["scale"]]):
            gap = abs(r["cosine"][name] - cos)
            worst = max(worst, gap - allowed)
            flag = "" if gap <= allowed else "   <- beyond the tolerance"
            print(f"a={r['scale']:<4g} {name}: model {r['cosine'][name]:.5f}, measured {cos:.5f}{flag}")
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,2,3,4,6,8,12,16,24,32,64,128,300")
    parser.add_argument("--check", action="store_true",
                        help="compare the kernels' schemes with their measured cosines (exit 1 past --tolerance)")
    parser.add_argument("--tolerance", type=float,
                        help="one tolerance for every scale (default: TOLERANCE, by the largest logit)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    scales = [float(s) if "." in s else int(s) for s in args.scales.split(",")]
    rows = model(scales)
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": "lab/models/sharpness_model.py", "rows": rows}, f, indent=1)
    if args.check:
        beyond = check(rows, args.tolerance)
        print("every gap within its tolerance" if beyond <= 0 else f"a gap {beyond:.5f} beyond its tolerance")
        return 0 if beyond <= 0 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
