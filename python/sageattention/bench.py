"""python -m sageattention.bench: sageattn() end to end (quantization included) against torch's
SDPA flash and cuDNN backends, timed in the same run on the same tensors.

TOPS = 4·b·h·s²·d / time, halved for causal; fp16, HND; b·s = 32k tokens; 32 heads at head dim
128, 64 heads at 64. Medians of CUDA-event-timed repetitions after warm-up, taken in --rounds
rounds that visit every method in turn; each method's best round is reported (a clock dip or
another process then costs one round of one method, not a cell of the table). Prints a table;
--json writes the numbers, --png a plot (TOPS against sequence length, one panel per head dim
and causal mode). Kernel-only figures: kernels/tests/bench_kernels.py.
"""
import argparse
import json

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from . import sageattn, sageattn_qk_int8_pv_fp8_cuda, sageattn_qk_int8_pv_fp16_cuda


def _median_ms(fn, reps=20, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def _sdpa(backend):
    def call(q, k, v, causal):
        with sdpa_kernel(backend):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return call


def run(seqs, head_dims=(128, 64), rounds=3):
    methods = {
        "SDPA flash": _sdpa(SDPBackend.FLASH_ATTENTION),
        "SDPA cuDNN": _sdpa(SDPBackend.CUDNN_ATTENTION),
        "sageattn": lambda q, k, v, c: sageattn(q, k, v, is_causal=c),
        "sage fp16-PV": lambda q, k, v, c: sageattn_qk_int8_pv_fp16_cuda(q, k, v, is_causal=c),
        "sage fp8-PV": lambda q, k, v, c: sageattn_qk_int8_pv_fp8_cuda(q, k, v, is_causal=c),
    }
    rows = []
    for d in head_dims:
        heads = 32 if d == 128 else 64
        for causal in (False, True):
            for seq in seqs:
                b = max(1, 32768 // seq)
                q, k, v = (torch.randn(b, heads, seq, d, device="cuda", dtype=torch.float16) for _ in range(3))
                flops = 4 * b * heads * seq * seq * d / (2 if causal else 1)
                best = {}  # method -> its best median (ms) over the rounds; None: not supported
                for _ in range(rounds):
                    for name, fn in methods.items():
                        if name in best and best[name] is None:
                            continue
                        try:
                            ms = _median_ms(lambda: fn(q, k, v, causal))
                        except RuntimeError:  # an SDPA backend that does not take these inputs
                            best[name] = None
                            continue
                        best[name] = min(ms, best.get(name) or ms)
                row = {"d": d, "causal": causal, "seq": seq, "batch": b, "heads": heads}
                row.update({name: flops / ms / 1e9 if ms else None for name, ms in best.items()})
                rows.append(row)
                del q, k, v
                torch.cuda.empty_cache()
    return rows


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [k for k in rows[0] if k not in ("d", "causal", "seq", "batch", "heads")]
    panels = sorted({(r["d"], r["causal"]) for r in rows}, key=lambda p: (-p[0], p[1]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), sharey=True)
    for ax, (d, causal) in zip(axes, panels):
        sel = [r for r in rows if r["d"] == d and r["causal"] == causal]
        for name in names:
            ax.plot([r["seq"] for r in sel], [r[name] or float("nan") for r in sel], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_title(f"head dim {d}, {'causal' if causal else 'non-causal'}")
        ax.set_xlabel("sequence length")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("TOPS")
    axes[-1].legend(fontsize=8)
    fig.suptitle(f"sageattn vs SDPA on {torch.cuda.get_device_name()} (fp16, b·s = 32k)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m sageattention.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--seqs", default="1024,2048,4096,8192,16384,32768")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all methods (default 3)")
    parser.add_argument("--json")
    parser.add_argument("--png")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("python -m sageattention.bench needs a CUDA GPU (torch.cuda.is_available() is False)")
    if args.rounds < 1:
        raise SystemExit("python -m sageattention.bench: --rounds must be at least 1")
    rows = run([int(s) for s in args.seqs.split(",")], rounds=args.rounds)
    names = [k for k in rows[0] if k not in ("d", "causal", "seq", "batch", "heads")]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; TOPS, best of {args.rounds} rounds")
    print(f"{'d':>3} {'causal':>6} {'seq':>6} | " + " ".join(f"{n:>13}" for n in names) + " | sageattn/cuDNN")
    for r in rows:
        ratio = r["sageattn"] / r["SDPA cuDNN"] if r.get("SDPA cuDNN") else float("nan")
        print(f"{r['d']:>3} {str(r['causal']):>6} {r['seq']:>6} | " +
              " ".join(f"{r[n]:>13.0f}" if r[n] else f"{'-':>13}" for n in names) + f" | {ratio:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "rounds": args.rounds, "rows": rows}, f, indent=1)
    if args.png:
        plot(rows, args.png)


if __name__ == "__main__":
    main()
