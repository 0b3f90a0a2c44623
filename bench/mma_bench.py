"""bench/mma_bench.py: the mma.sync kernels, which GeForce, workstation and A100 cards run, against
upstream SageAttention 2.2's, in one process, on the same tensors, for every P·V accumulation
mode either has.

Run with our package installed and upstream built from source for this GPU as the module
`sageattention_upstream` (bench/build_upstream.sh; without it the upstream columns are empty):
  python3 bench/mma_bench.py [--suite speed,accuracy] [--seqs 1024,4096] [--head-dims 64,128]
                             [--modes "fp16 fp32,fp16 fp16+fp32"] [--rounds 2] [--json F] [--png F]

speed     TOPS end to end (each library's quantization included) through the per-path
          functions with qk_quant_gran="per_warp" on both sides (the same work): fp16 inputs, HND,
          b·s = 32k tokens, 4096/d heads, causal and not; TOPS = 4·b·h·s²·d / time, halved for
          causal. On Hopper our fp16 function would take the wgmma kernel: this script keeps it
          on mma.sync (plan._keep_mma_fp16_on_hopper), and the FP8 mma.sync is emulated there
          (e4m3 unpacked to f16 for HMMA) for both libraries alike, so the fp8 rows show the
          code's cost, not an Ada card's FP8 rate (docs/kernels.md models those).
accuracy  cosine and relative L1 against a float64 reference, per mode, on Gaussian inputs, K
          with per-channel offsets of 10σ, V with offsets of 20σ (FP16 sums near their range),
          and sharp softmax (q, k ×8), at 4k, 32k and 128k keys; the reference is computed for
          512 query rows drawn at random (all of them below that).

Timing: the median of CUDA-event-timed repetitions (bench/cuda_timing.py), the best of --rounds
rounds that visit every method in turn.
"""

import argparse
import importlib
import json
import math
import sys
from functools import partial

import torch

import sageattention
from cuda_timing import best_of_rounds, prefill_shapes  # beside this file
from sageattention import plan as _plan

# (mode, our per-path function and pv_accum_dtype, upstream's), None where a library lacks it.
MODES = (
    ("fp8 fp32+fp32", ("sageattn_qk_int8_pv_fp8_cuda", "fp32+fp32")),
    ("fp8 fp32+fp16", ("sageattn_qk_int8_pv_fp8_cuda", "fp32+fp16")),
    ("fp16 fp32", ("sageattn_qk_int8_pv_fp16_cuda", "fp32")),
    ("fp16 fp16+fp32", ("sageattn_qk_int8_pv_fp16_cuda", "fp16+fp32")),
    ("fp16 fp16", ("sageattn_qk_int8_pv_fp16_cuda", "fp16")),
)


def _call(module, function, accum):
    """(q, k, v, causal) -> O through module.function with pv_accum_dtype=accum, or None where
    the module lacks the function or the mode (asked once, on a tiny call)."""
    if module is None or not hasattr(module, function):
        return None
    fn = partial(
        getattr(module, function),
        tensor_layout="HND",
        qk_quant_gran="per_warp",
        pv_accum_dtype=accum,
    )
    tiny = torch.randn(1, 1, 128, 64, device="cuda", dtype=torch.float16)
    try:
        fn(tiny, tiny, tiny, is_causal=False)
    except (ValueError, RuntimeError, NotImplementedError, AssertionError):
        return None
    return lambda q, k, v, causal: fn(q, k, v, is_causal=causal)


def methods(upstream):
    """{(mode, "ours" | "upstream"): callable or None}."""
    out = {}
    for mode, (function, accum) in MODES:
        out[(mode, "ours")] = _call(sageattention, function, accum)
        out[(mode, "upstream")] = _call(upstream, function, accum)
    return out


def speed(calls, seqs, head_dims, rounds):
    rows = []
    for shape in prefill_shapes(seqs, head_dims):
        ms = best_of_rounds(
            {
                f"{m}|{lib}": fn and partial(fn, shape.q, shape.k, shape.v, shape.causal)
                for (m, lib), fn in calls.items()
            },
            rounds,
        )
        rows.append(
            {
                "d": shape.d,
                "causal": shape.causal,
                "seq": shape.seq,
                "batch": shape.batch,
                "heads": shape.heads,
                "tops": {key: shape.flops / t / 1e9 for key, t in ms.items() if t},
            }
        )
        print_speed_row(rows[-1])
        del shape
    return rows


def print_speed_row(row):
    head = f"d{row['d']} {'causal' if row['causal'] else 'full  '} {row['seq']:>6}"
    cells = []
    for mode, _ in MODES:
        ours, up = row["tops"].get(f"{mode}|ours"), row["tops"].get(f"{mode}|upstream")
        ratio = f" ({ours / up:.2f}x)" if ours and up else ""
        cells.append(f"{mode}: {ours or 0:6.1f} / {up or 0:6.1f}{ratio}")
    print(head + " | " + " | ".join(cells), flush=True)


def _inputs(kind, h, s, d, gen):
    q, k, v = (torch.randn(1, h, s, d, device="cuda", generator=gen) for _ in range(3))
    if kind == "k offsets":
        k = k + 10 * torch.randn(1, 1, 1, d, device="cuda", generator=gen)
    elif kind == "v offsets":
        v = v + 20 * torch.randn(1, 1, 1, d, device="cuda", generator=gen)
    elif kind == "sharp":
        q, k = 8 * q, 8 * k
    return q.half(), k.half(), v.half()


def _reference(q, k, v, rows):
    """float64 O for the query rows `rows` (indices) of every head."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    qs = q[:, :, rows].double()
    out = []
    for h in range(q.shape[1]):
        s = (qs[0, h] @ k[0, h].double().T) * scale
        out.append(torch.softmax(s, dim=-1) @ v[0, h].double())
    return torch.stack(out).unsqueeze(0)


def accuracy(
    calls,
    head_dims,
    lengths=(4096, 32768, 131072),
    kinds=("normal", "k offsets", "v offsets", "sharp"),
):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    rows = []
    for d in head_dims:
        for s in lengths:
            for kind in kinds:
                q, k, v = _inputs(kind, 2, s, d, gen)
                picked = torch.randperm(s, device="cuda", generator=gen)[:512].sort().values
                ref = _reference(q, k, v, picked)
                row = {"d": d, "seq": s, "kind": kind, "cos": {}, "rel_l1": {}}
                for (mode, lib), fn in calls.items():
                    if fn is None:
                        continue
                    o = fn(q, k, v, False)[:, :, picked].double()
                    key = f"{mode}|{lib}"
                    row["cos"][key] = torch.nn.functional.cosine_similarity(
                        o.flatten(), ref.flatten(), dim=0
                    ).item()
                    row["rel_l1"][key] = ((o - ref).abs().sum() / ref.abs().sum()).item()
                rows.append(row)
                print(
                    f"d{d} {s:>6} {kind:<10} "
                    + " | ".join(
                        f"{k}: cos {row['cos'][k]:.5f} rel {row['rel_l1'][k]:.4f}"
                        for k in row["cos"]
                    ),
                    flush=True,
                )
                del q, k, v, ref
                torch.cuda.empty_cache()
    return rows


def plot(result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["speed"]
    dims = sorted({r["d"] for r in rows})
    fig, axes = plt.subplots(len(dims), 2, figsize=(12, 4 * len(dims)), squeeze=False)
    for i, d in enumerate(dims):
        for j, causal in enumerate((False, True)):
            ax = axes[i][j]
            sel = [r for r in rows if r["d"] == d and r["causal"] == causal]
            for key in sorted({k for r in sel for k in r["tops"]}):
                ax.plot(
                    [r["seq"] for r in sel],
                    [r["tops"].get(key) for r in sel],
                    marker="o",
                    linestyle="-" if key.endswith("ours") else "--",
                    label=key.replace("|", ", "),
                )
            ax.set_xscale("log", base=2)
            ax.set_title(f"d={d}, {'causal' if causal else 'not causal'}")
            ax.set_xlabel("sequence length")
            ax.set_ylabel("TOPS")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="speed,accuracy")
    parser.add_argument("--seqs", default="1024,2048,4096,8192,16384,32768")
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--modes", help="the modes to run, comma-separated (default: every one)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--upstream-module", default="sageattention_upstream")
    parser.add_argument("--json")
    parser.add_argument("--png")
    args = parser.parse_args(argv)
    try:
        upstream = importlib.import_module(args.upstream_module)
    except ImportError as e:
        print(f"upstream: not importable ({e}); its columns stay empty", file=sys.stderr)
        upstream = None
    _plan._keep_mma_fp16_on_hopper = True
    calls = methods(upstream)
    if args.modes:
        wanted = args.modes.split(",")
        unknown = [m for m in wanted if m not in dict(MODES)]
        if unknown:
            parser.error(f"unknown modes {unknown}; the modes: {', '.join(m for m, _ in MODES)}")
        calls = {key: fn if key[0] in wanted else None for key, fn in calls.items()}
    print(
        "modes (ours / upstream): "
        + ", ".join(
            f"{m} {'+' if calls[(m, 'ours')] else '-'}/{'+' if calls[(m, 'upstream')] else '-'}"
            for m, _ in MODES
        )
    )
    dims = [int(x) for x in args.head_dims.split(",")]
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    suites = args.suite.split(",")
    if "speed" in suites:
        result["speed"] = speed(calls, [int(x) for x in args.seqs.split(",")], dims, args.rounds)
    if "accuracy" in suites:
        result["accuracy"] = accuracy(calls, dims)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.png and "speed" in result:
        plot(result, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
