"""bench/sageattn_bench.py: sageattn() against its peers, in one process, on the same tensors.

Run from the repository with the package installed (the wheel, or PYTHONPATH to it):
  python3 bench/sageattn_bench.py [--suite ...] [--rounds N] [--json F] [--png F]

Suites (--suite, default all):
  prefill   TOPS at sequence lengths 1k-32k: fp16, HND, b·s = 32k tokens, 4096/d heads (32 at
            head dim 128, 64 at 64, 16 at 256; --head-dims), causal and not; TOPS =
            4·b·h·s²·d / time, halved for causal (d as the caller's: 96 and 192 are padded).
            sageattn() end to end (its quantization included), the per-path functions, torch's
            SDPA with the flash and cuDNN backends, and cuDNN's FP8 attention (the
            nvidia-cudnn-frontend package: the kernel alone on inputs already in e4m3, and that
            plus the per-tensor e4m3 quantization of the fp16 inputs a caller would run first,
            whose time is also shown on its own).
  decode    microseconds per call for few queries against a long K/V, as in generation loops:
            b=8, 32 query heads (MHA, and GQA with 8 KV heads), d=128, 1-1024 queries against
            1k-32k keys. sageattn() as it dispatches, sageattn's kernel forced
            (sdpa_for_short_queries=False), torch's SDPA as it chooses and per backend.
  short     microseconds per call of square calls of 256-4096 tokens at batch 1, 4 and 16:
            sageattn() as it dispatches, its kernel forced, torch's SDPA.
  accuracy  cosine similarity and relative L1 error against a float64 reference, per method, on
            Gaussian inputs, K with large per-channel offsets, and sharp softmax (q, k scaled by 8).
  sharpness the cosine as q and k grow from N(0,1) to N(0,1)·300 (largest logit ~10^5): where
            INT8 Q·Kᵀ starts to lose the rows' winning key.
  varlen    a packed batch of 64 sequences, lengths drawn uniformly from 128-8192 (seeded), 32
            heads at d=128 (64 at d=64), causal and not: sageattn_varlen, sageattn() on the batch
            padded to the longest sequence (what callers without varlen do; its TOPS are
            flattered by the padding, on whose zeros the tensor cores run faster), sageattn() on
            a dense batch of that shape of random values, torch's varlen_attn (FlashAttention,
            fp16) and SDPA cuDNN called per sequence. TOPS count each method's own work: the
            sequences' for the packed calls, the padded batch's for the padded and dense ones.

Timing: the median of CUDA-event-timed repetitions after warm-up, in --rounds rounds that visit
every method in turn; each method's best round is kept (a clock dip or another process then costs
one round of one method, not a cell of the table). Prints tables; --json writes every number,
--png a plot. Kernel-only figures of our own kernels: bench/kernels/bench_kernels.py.
"""

import argparse
import json
import math
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

import cudnn_fp8 as _cudnn_fp8  # beside this file
from cuda_timing import best_of_rounds, prefill_shapes
from sageattention import (
    core,
    sageattn,
    sageattn_qk_int8_pv_fp8_cuda,
    sageattn_qk_int8_pv_fp16_cuda,
    sageattn_varlen,
)

SUITES = ("prefill", "decode", "short", "accuracy", "sharpness", "varlen")


def _call_each(functions):
    return [f() for f in functions]


def _sequence_hnd(q, k, v, start: int, end: int) -> tuple[Any, Any, Any]:
    """One sequence of packed [total, heads, d] q, k, v as [1, heads, length, d] views."""
    qs, ks, vs = (t[start:end].transpose(0, 1).unsqueeze(0) for t in (q, k, v))
    return qs, ks, vs


def _sdpa(backend, q, k, v, causal):
    gqa = q.shape[1] != k.shape[1]
    if causal and q.shape[2] != k.shape[2]:  # bottom-right, as sageattn aligns it
        mask = causal_lower_right(q.shape[2], k.shape[2])
        kwargs = dict(attn_mask=mask)
    else:
        kwargs = dict(is_causal=causal)
    if backend is None:
        return lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa, **kwargs)

    def call():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa, **kwargs)

    return call


def _path_functions():
    """The per-path functions worth timing on this GPU: on Hopper the wgmma kernel's two P·V
    paths (the FP8 mma.sync path is emulated there), elsewhere the two mma.sync ones."""
    hopper = torch.cuda.get_device_capability() == (9, 0)
    fp8 = (
        core.sageattn_qk_int8_pv_fp8_cuda_sm90
        if hopper and core._ops.HAS_SM90A
        else sageattn_qk_int8_pv_fp8_cuda
    )
    return {"sage fp16-PV": sageattn_qk_int8_pv_fp16_cuda, "sage fp8-PV": fp8}


class _CudnnFp8:
    """cuDNN FP8 peer: None-valued calls (with .why) when the package or the GPU cannot run it."""

    def __init__(self, enabled):
        self.why = None if enabled else "--no-cudnn-fp8"
        if enabled:
            try:
                _cudnn_fp8.load()
            except ImportError as e:
                self.why = f"the nvidia-cudnn-frontend package is not importable ({e})"

    def calls(self, q, k, v, causal):
        """{"cuDNN FP8": kernel alone, "FP8 quant": quantizing q, k, v, "cuDNN FP8+quant": both}."""
        names = ("cuDNN FP8", "FP8 quant", "cuDNN FP8+quant")
        if self.why is not None:
            return dict.fromkeys(names)
        try:
            (q8, dq), (k8, dk), (v8, dv) = (_cudnn_fp8.quantize(t) for t in (q, k, v))
            scale_o = 1.0 / dv
            kernel = _cudnn_fp8.Attention(q8, k8, v8, causal, 1.0 / math.sqrt(q.shape[-1]))
        except Exception as e:  # noqa: BLE001 - cuDNN says "not supported" in several exception types
            print(
                f"  cuDNN FP8 does not take b={q.shape[0]} h={q.shape[1]} s={q.shape[2]} "
                f"d={q.shape[3]} causal={causal}: {str(e).splitlines()[0][:160]}"
            )
            return dict.fromkeys(names)

        def quant():
            return [_cudnn_fp8.quantize_fused(t) for t in (q, k, v)]

        def both():
            (a, da), (b, db), (c, dc) = quant()
            return kernel(a, b, c, da, db, dc, 1.0 / dc)

        return {
            "cuDNN FP8": lambda: kernel(q8, k8, v8, dq, dk, dv, scale_o),
            "FP8 quant": quant,
            "cuDNN FP8+quant": both,
        }


def _as_us(ms):
    return {n: t * 1e3 if t else None for n, t in ms.items()}


def _dispatch_calls(q, k, v, causal):
    """sageattn() as it dispatches, its kernel forced, and SDPA as torch picks: the short-call
    suites' common columns."""
    return {
        "sageattn": lambda: sageattn(q, k, v, is_causal=causal),
        "sage kernel": lambda: sageattn(q, k, v, is_causal=causal, sdpa_for_short_queries=False),
        "SDPA": _sdpa(None, q, k, v, causal),
    }


def _exact_and_fp8_peers(fp8, d):
    """SDPA cuDNN (fp16) and, when measurable, cuDNN FP8, as (q, k, v) -> O, non-causal."""
    peers = {"SDPA cuDNN": lambda q, k, v: _sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, False)()}
    if fp8.why is None:
        peers["cuDNN FP8"] = lambda q, k, v: _cudnn_fp8.attention_fp16(
            q, k, v, False, 1 / math.sqrt(d)
        )
    return peers


def prefill(seqs, head_dims, rounds, fp8):
    rows = []
    for shape in prefill_shapes(seqs, head_dims):
        q, k, v, causal = shape.q, shape.k, shape.v, shape.causal
        calls = {
            "sageattn": partial(sageattn, q, k, v, is_causal=causal),
            **{n: partial(f, q, k, v, is_causal=causal) for n, f in _path_functions().items()},
            "SDPA flash": _sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal),
            "SDPA cuDNN": _sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal),
            **fp8.calls(q, k, v, causal),
        }
        ms = best_of_rounds(calls, rounds)
        rows.append(
            {
                "d": shape.d,
                "causal": causal,
                "seq": shape.seq,
                "batch": shape.batch,
                "heads": shape.heads,
                "ms": ms,
                "tops": {n: shape.flops / t / 1e9 for n, t in ms.items() if t and n != "FP8 quant"},
            }
        )
        del q, k, v, calls, shape  # free the inputs before the next shape
    return rows


def decode(rounds, q_lens=(1, 16, 64, 128, 256, 512, 1024), k_lens=(1024, 8192, 32768)):
    rows = []
    b, hq, d = 8, 32, 128
    for hk in (32, 8):
        for causal in (False, True):
            for lk in k_lens:
                for lq in q_lens:
                    if lq > lk or (causal and lq == 1):  # one query: causal is the same call
                        continue
                    q = torch.randn(b, hq, lq, d, device="cuda", dtype=torch.float16)
                    k, v = (
                        torch.randn(b, hk, lk, d, device="cuda", dtype=torch.float16)
                        for _ in range(2)
                    )
                    calls = {
                        **_dispatch_calls(q, k, v, causal),
                        "SDPA flash": _sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal),
                        "SDPA efficient": _sdpa(SDPBackend.EFFICIENT_ATTENTION, q, k, v, causal),
                        "SDPA cuDNN": _sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal),
                    }
                    ms = best_of_rounds(calls, rounds)
                    rows.append(
                        {
                            "batch": b,
                            "heads_q": hq,
                            "heads_kv": hk,
                            "d": d,
                            "causal": causal,
                            "seq_q": lq,
                            "seq_k": lk,
                            "us": _as_us(ms),
                        }
                    )
                    del q, k, v, calls
    torch.cuda.empty_cache()
    return rows


def short(rounds, seqs=(256, 512, 1024, 2048, 4096), batches=(1, 4, 16)):
    """Microseconds per call of square calls (seq_q = seq_k) too short for the kernels to pay,
    at several batch sizes: where sageattn()'s rule should hand them to SDPA. 32 heads at d=128,
    64 at d=64; sageattn() as it dispatches, its kernel forced, and SDPA as torch picks."""
    rows = []
    for d in (128, 64):
        heads = max(1, 4096 // d)
        for causal in (False, True):
            for seq in seqs:
                for b in batches:
                    q, k, v = (
                        torch.randn(b, heads, seq, d, device="cuda", dtype=torch.float16)
                        for _ in range(3)
                    )
                    calls = _dispatch_calls(q, k, v, causal)
                    ms = best_of_rounds(calls, rounds)
                    rows.append(
                        {
                            "batch": b,
                            "heads": heads,
                            "d": d,
                            "causal": causal,
                            "seq": seq,
                            "us": _as_us(ms),
                        }
                    )
                    q = k = v = calls = None
    torch.cuda.empty_cache()
    return rows


def _print_short(rows):
    if not rows:
        return
    print(
        "\nshort: microseconds per call of square calls (32 heads at d=128, 64 at d=64); "
        "kernel/SDPA > 1: SDPA is faster"
    )
    print(
        f"{'d':>3} {'causal':>6} {'seq':>5} {'b':>3} | {'sageattn':>10} {'sage kernel':>12} "
        f"{'SDPA':>10} | kernel/SDPA"
    )
    for r in rows:
        us = r["us"]
        print(
            f"{r['d']:>3} {str(r['causal']):>6} {r['seq']:>5} {r['batch']:>3} | "
            f"{us['sageattn']:>10.1f} "
            f"{us['sage kernel']:>12.1f} {us['SDPA']:>10.1f} | {us['sage kernel'] / us['SDPA']:.2f}"
        )


def _inputs(kind, b, h, s, d):
    g = torch.Generator(device="cuda").manual_seed(hash(kind) % 2**31)
    q, k, v = (torch.randn(b, h, s, d, device="cuda", generator=g) for _ in range(3))
    if kind == "k_outliers":  # large per-channel offsets, as trained models' keys have
        k = k + 20 * torch.randn(1, 1, 1, d, device="cuda", generator=g)
    if kind == "sharp":  # logits of a few tens: rows close to one-hot
        q, k = q * 8, k * 8
    return tuple(t.half() for t in (q, k, v))


def accuracy(fp8, seq=2048, b=1, h=8, d=128):
    """{input kind: {method: {"cosine", "rel_l1"}}} against float64 attention of the fp16 inputs."""
    methods = {"sageattn": sageattn, **_path_functions(), **_exact_and_fp8_peers(fp8, d)}
    table: dict = {}
    for kind in ("gaussian", "k_outliers", "sharp"):
        q, k, v = _inputs(kind, b, h, seq, d)
        ref = (
            torch.softmax(q.double() @ k.double().transpose(-1, -2) / math.sqrt(d), dim=-1)
            @ v.double()
        )
        table[kind] = {}
        for name, fn in methods.items():
            out = fn(q, k, v).double()
            diff = (out - ref).abs().sum() / ref.abs().sum()
            cos = F.cosine_similarity(out.flatten(), ref.flatten(), dim=0)
            table[kind][name] = {"cosine": cos.item(), "rel_l1": diff.item()}
    return table


def sharpness(fp8, scales=(1, 2, 4, 6, 8, 12, 16, 24, 32, 64, 128, 300), seq=1024, b=1, h=8, d=128):
    """Accuracy as the logits grow: q, k of N(0, 1)·a (the largest |q·k|/√d grows as a²), v of
    N(0, 1), non-causal; per method the cosine similarity against float64, beside the largest
    logit and the median of the rows' largest softmax probability (near 1: one-hot rows).
    sageattn's kernel as called (its sharp-tile guard on), then the quantized kernels alone
    (sharp_threshold=None): per_warp and per_block Q scales, FP8 P·V."""
    fp8_pv = _path_functions()["sage fp8-PV"]
    gran = {
        "sageattn": lambda q, k, v: sageattn(q, k, v, sdpa_for_short_queries=False),
        "no guard": lambda q, k, v: sageattn(
            q, k, v, sdpa_for_short_queries=False, sharp_threshold=None
        ),
        "per_block Q, no guard": lambda q, k, v: sageattn_qk_int8_pv_fp16_cuda(
            q, k, v, qk_quant_gran="per_block", sharp_threshold=None
        ),
        "fp8-PV, no guard": lambda q, k, v: fp8_pv(q, k, v, sharp_threshold=None),
        **_exact_and_fp8_peers(fp8, d),
    }
    rows = []
    g = torch.Generator(device="cuda").manual_seed(1)
    for a in scales:
        q, k, v = (torch.randn(b, h, seq, d, device="cuda", generator=g) for _ in range(3))
        q, k, v = (q * a).half(), (k * a).half(), v.half()
        logits = q.double() @ k.double().transpose(-1, -2) / math.sqrt(d)
        ref = torch.softmax(logits, dim=-1) @ v.double()
        top = torch.softmax(logits, dim=-1).amax(dim=-1)
        row = {
            "scale": a,
            "max_logit": logits.abs().max().item(),
            "median_top_probability": top.median().item(),
            "cosine": {},
        }
        for name, fn in gran.items():
            out = fn(q, k, v).double()
            row["cosine"][name] = F.cosine_similarity(out.flatten(), ref.flatten(), dim=0).item()
        rows.append(row)
    return rows


def _torch_varlen(q, k, v, cu, longest, causal):
    """torch's own varlen attention (torch.nn.attention.varlen, FlashAttention), or None where
    this torch has none."""
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return None
    window = (-1, 0) if causal else (-1, -1)
    return lambda: varlen_attn(q, k, v, cu, cu, longest, longest, window_size=window)


def varlen(rounds, sequences=64, shortest=128, longest=8192, seed=0):
    """Packed batches against the padded dense call and per-sequence SDPA (module docstring)."""
    rows = []
    lengths = torch.randint(
        shortest, longest + 1, (sequences,), generator=torch.Generator().manual_seed(seed)
    )
    lengths = lengths.tolist()
    cu = torch.tensor(
        [0] + [sum(lengths[: i + 1]) for i in range(sequences)], dtype=torch.int32, device="cuda"
    )
    top = max(lengths)
    for d in (128, 64):
        heads = max(1, 4096 // d)
        for causal in (False, True):
            q, k, v = (
                torch.randn(sum(lengths), heads, d, device="cuda", dtype=torch.float16)
                for _ in range(3)
            )
            padded = [
                torch.zeros(sequences, top, heads, d, device="cuda", dtype=torch.float16)
                for _ in range(3)
            ]
            for t, p in zip((q, k, v), padded):
                for i, n in enumerate(lengths):
                    p[i, :n] = t[cu[i] : cu[i] + n]
            pq, pk, pv = (p.transpose(1, 2) for p in padded)  # HND views
            dq, dk, dv = (torch.randn_like(p) for p in (pq, pk, pv))
            bounds = list(zip(cu.tolist(), cu.tolist()[1:]))
            per_sequence = [
                _sdpa(SDPBackend.CUDNN_ATTENTION, *_sequence_hnd(q, k, v, a, b), causal)
                for a, b in bounds
            ]
            calls = {
                "sageattn_varlen": partial(
                    sageattn_varlen, q, k, v, cu, cu, top, top, is_causal=causal
                ),
                "sageattn padded": partial(sageattn, pq, pk, pv, is_causal=causal),
                "sageattn dense": partial(sageattn, dq, dk, dv, is_causal=causal),
                "torch varlen_attn": _torch_varlen(q, k, v, cu, top, causal),
                "SDPA cuDNN per seq": partial(_call_each, per_sequence),
            }
            ms = best_of_rounds(calls, rounds)
            work = sum(4 * heads * n * n * d for n in lengths) / (2 if causal else 1)
            padded_work = 4 * sequences * heads * top * top * d / (2 if causal else 1)
            rows.append(
                {
                    "d": d,
                    "heads": heads,
                    "causal": causal,
                    "lengths": lengths,
                    "ms": ms,
                    "tops": {
                        n: (padded_work if n in ("sageattn padded", "sageattn dense") else work)
                        / t
                        / 1e9
                        for n, t in ms.items()
                        if t
                    },
                }
            )
            del q, k, v, padded, pq, pk, pv, dq, dk, dv, per_sequence, calls
            torch.cuda.empty_cache()
    return rows


def _print_varlen(rows):
    if not rows:
        return
    r0 = rows[0]
    lengths = r0["lengths"]
    print(
        f"\nvarlen: {len(lengths)} sequences of {min(lengths)}-{max(lengths)} tokens "
        f"({sum(lengths)} in all), "
        "fp16; TOPS of each method's own work (padded: the padded batch's); ms per call"
    )
    names = list(r0["ms"])
    print(
        f"{'d':>3} {'causal':>6} | "
        + " ".join(f"{n:>19}" for n in names)
        + " | TOPS vs padded, vs dense | speed vs SDPA per seq"
    )
    for r in rows:
        tops, ms = r["tops"], r["ms"]
        cells = " ".join(
            f"{tops[n]:>7.0f} ({ms[n]:>7.2f})" if ms.get(n) else f"{'-':>19}" for n in names
        )
        vs_padded = tops["sageattn_varlen"] / tops["sageattn padded"]
        vs_dense = tops["sageattn_varlen"] / tops["sageattn dense"]
        vs_sdpa = ms["SDPA cuDNN per seq"] / ms["sageattn_varlen"]
        print(
            f"{r['d']:>3} {str(r['causal']):>6} | {cells} | {vs_padded:>14.2f} {vs_dense:>8.2f} | "
            f"{vs_sdpa:>20.2f}"
        )


def _print_sharpness(rows):
    if not rows:
        return
    names = list(rows[0]["cosine"])
    print(
        "\nsharpness: cosine against float64 as the logits grow "
        "(b=1, h=8, s=1024, d=128; q, k = N(0,1)·a)"
    )
    print(f"{'a':>4} {'max logit':>10} {'top p':>6} | " + " ".join(f"{n:>12}" for n in names))
    for r in rows:
        print(
            f"{r['scale']:>4} {r['max_logit']:>10.0f} {r['median_top_probability']:>6.3f} | "
            + " ".join(f"{r['cosine'][n]:>12.5f}" for n in names)
        )


def _print_prefill(rows):
    names = [n for n in rows[0]["ms"] if n != "FP8 quant"] if rows else []
    print("\nprefill: TOPS (FP8 quant: ms for q, k, v)")
    print(
        f"{'d':>3} {'causal':>6} {'seq':>6} | "
        + " ".join(f"{n:>15}" for n in names)
        + f" | {'FP8 quant':>9} | vs cuDNN  vs FP8"
    )
    for r in rows:
        tops = r["tops"]
        cells = " ".join(f"{tops[n]:>15.0f}" if tops.get(n) else f"{'-':>15}" for n in names)
        quant = r["ms"].get("FP8 quant")
        ratio = [
            tops["sageattn"] / tops[p] if tops.get(p) and tops.get("sageattn") else float("nan")
            for p in ("SDPA cuDNN", "cuDNN FP8")
        ]
        print(
            f"{r['d']:>3} {str(r['causal']):>6} {r['seq']:>6} | {cells} | "
            f"{quant if quant is not None else float('nan'):>9.3f} | "
            f"{ratio[0]:>7.2f} {ratio[1]:>6.2f}"
        )


def _print_decode(rows):
    if not rows:
        return
    names = list(rows[0]["us"])
    print(
        "\ndecode: microseconds per call (b=8, 32 query heads, d=128); ratio = sageattn / best SDPA"
    )
    print(
        f"{'kv':>3} {'causal':>6} {'seq_k':>6} {'seq_q':>6} | "
        + " ".join(f"{n:>14}" for n in names)
        + " | ratio"
    )
    for r in rows:
        us = r["us"]
        sdpa = [t for n, t in us.items() if n.startswith("SDPA") and t]
        ratio = us["sageattn"] / min(sdpa) if sdpa and us["sageattn"] else float("nan")
        print(
            f"{r['heads_kv']:>3} {str(r['causal']):>6} {r['seq_k']:>6} {r['seq_q']:>6} | "
            + " ".join(f"{us[n]:>14.1f}" if us[n] else f"{'-':>14}" for n in names)
            + f" | {ratio:.2f}"
        )


def _print_accuracy(table):
    print("\naccuracy against float64 (b=1, h=8, s=2048, d=128, non-causal): cosine / relative L1")
    for kind, methods in table.items():
        print(
            f"  {kind:>10}: "
            + "   ".join(f"{n} {m['cosine']:.5f} / {m['rel_l1']:.4f}" for n, m in methods.items())
        )


def plot(result, path):
    """Prefill TOPS panels on the first row, decode microseconds (non-causal) on the second."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pre, dec = result.get("prefill") or [], result.get("decode") or []
    panels = sorted({(r["d"], r["causal"]) for r in pre}, key=lambda p: (-p[0], p[1]))
    decode_panels = sorted(
        {(r["heads_kv"], r["seq_k"]) for r in dec if not r["causal"]}, key=lambda p: (-p[0], p[1])
    )
    rows = [row for row in (panels, decode_panels) if row]
    if not rows:
        return
    cols = max(len(row) for row in rows)
    fig, axes = plt.subplots(len(rows), cols, figsize=(4.4 * cols, 3.9 * len(rows)), squeeze=False)
    row_axes = iter(axes)
    if panels:
        line = next(row_axes)
        for ax, (d, causal) in zip(line, panels):
            sel = [r for r in pre if r["d"] == d and r["causal"] == causal]
            for name in sel[0]["tops"]:
                ax.plot(
                    [r["seq"] for r in sel],
                    [r["tops"].get(name) or float("nan") for r in sel],
                    marker="o",
                    label=name,
                )
            ax.set_xscale("log", base=2)
            ax.set_title(f"prefill, d={d}, {'causal' if causal else 'non-causal'}")
            ax.set_xlabel("sequence length (b·s = 32k)")
            ax.set_ylabel("TOPS")
    if decode_panels:
        line = next(row_axes)
        for ax, (hk, lk) in zip(line, decode_panels):
            sel = [r for r in dec if r["heads_kv"] == hk and r["seq_k"] == lk and not r["causal"]]
            for name in sel[0]["us"]:
                ax.plot(
                    [r["seq_q"] for r in sel],
                    [r["us"].get(name) or float("nan") for r in sel],
                    marker="o",
                    label=name,
                )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"decode, {lk // 1024}k keys, {hk} KV heads (b=8, 32 q heads)")
            ax.set_xlabel("queries")
            ax.set_ylabel("µs per call")
    for ax in axes.flat:
        if ax.has_data():
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        else:  # the shorter row's spare panels
            ax.set_visible(False)
    fig.suptitle(
        f"sageattn and its peers on {result.get('gpu', '?')} "
        f"(fp16, torch {result.get('torch', '?')})"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="bench/sageattn_bench.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--suite", default=",".join(SUITES), help=f"comma-separated, of {', '.join(SUITES)}"
    )
    parser.add_argument(
        "--seqs", default="1024,2048,4096,8192,16384,32768", help="prefill sequence lengths"
    )
    parser.add_argument("--head-dims", default="128,64", help="prefill head dims")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all methods (default 3)")
    parser.add_argument(
        "--no-cudnn-fp8", action="store_true", help="leave cuDNN's FP8 attention out"
    )
    parser.add_argument("--json", help="write every number here")
    parser.add_argument("--png", help="write a plot here")
    parser.add_argument(
        "--plot-from", metavar="JSON", help="only draw --png from an earlier --json (no GPU needed)"
    )
    args = parser.parse_args(argv)
    if args.plot_from:
        if not args.png:
            parser.error("--plot-from needs --png")
        with open(args.plot_from) as f:
            plot(json.load(f), args.png)
        return
    suites = [s for s in args.suite.split(",") if s]
    unknown = [s for s in suites if s not in SUITES]
    if unknown:
        parser.error(f"unknown suite {unknown[0]!r} (suites: {', '.join(SUITES)})")
    if not torch.cuda.is_available():
        raise SystemExit(
            "bench/sageattn_bench.py needs a CUDA GPU (torch.cuda.is_available() is False)"
        )
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    fp8 = _CudnnFp8(enabled=not args.no_cudnn_fp8)
    cudnn_version = torch.backends.cudnn.version()
    print(
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}, cuDNN {cudnn_version}; "
        f"best of {args.rounds} rounds"
    )
    if fp8.why:
        print(f"cuDNN FP8: not measured: {fp8.why}")
    result = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cudnn": cudnn_version,
        "cudnn_frontend": _frontend_version(),
        "rounds": args.rounds,
    }
    if "prefill" in suites:
        result["prefill"] = prefill(
            [int(s) for s in args.seqs.split(",")],
            [int(d) for d in args.head_dims.split(",")],
            args.rounds,
            fp8,
        )
        _print_prefill(result["prefill"])
    if "decode" in suites:
        result["decode"] = decode(args.rounds)
        _print_decode(result["decode"])
    if "short" in suites:
        result["short"] = short(args.rounds)
        _print_short(result["short"])
    if "accuracy" in suites:
        result["accuracy"] = accuracy(fp8)
        _print_accuracy(result["accuracy"])
    if "sharpness" in suites:
        result["sharpness"] = sharpness(fp8)
        _print_sharpness(result["sharpness"])
    if "varlen" in suites:
        result["varlen"] = varlen(args.rounds)
        _print_varlen(result["varlen"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.png:
        plot(result, args.png)


def _frontend_version():
    try:
        from importlib.metadata import version

        return version("nvidia-cudnn-frontend")
    except Exception:  # noqa: BLE001 - not installed, or installed without metadata
        return None


if __name__ == "__main__":
    main()
