"""sageattn_varlen: quantized attention over a packed batch of sequences of different lengths (as
LLM serving and packed training hold them), with FlashAttention's varlen calling convention.

The sequences lie one after another along the first axis of q [total_q, heads_q, head_dim] and of
k, v [total_k, heads_kv, head_dim]; sequence b's queries are rows cu_seqlens_q[b] ..
cu_seqlens_q[b + 1] - 1, its keys rows cu_seqlens_k[b] .. of k and v. Each sequence is attended
on its own: K's smoothing mean, V's FP8 scales and the causal mask (bottom-right aligned, per
sequence) are its own, so a sequence's statistics never reach another's output."""

import math

import torch

from .core import (
    _ACCUMULATIONS,
    _GRANULARITY,
    _PATHS,
    SHARP_THRESHOLD,
    SageAttentionError,
    _call_facts,
    _fall_back,
    _granularity,
    _sdpa,
    run_planned,
    sharp_threshold_value,
)
from .plan import accumulation_for, plan_call

# The P·V paths a varlen call can ask for (pv_path=); None picks as sageattn does.
VARLEN_PATHS = ("fp16", "fp8", "fp8_sm90", "fp16_sm90")


def _validate_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise SageAttentionError(
                f"sageattn_varlen: {name} must be a torch.Tensor, not {type(t).__name__}"
            )
        if t.dim() != 3:
            raise SageAttentionError(
                f"sageattn_varlen: {name} must be 3-D [total_tokens, heads, head_dim], "
                f"got shape {tuple(t.shape)}"
            )
    if not (q.device == k.device == v.device):
        raise SageAttentionError(
            f"sageattn_varlen: q, k, v must be on one device, got {q.device}, {k.device}, "
            f"{v.device}"
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise SageAttentionError(
            f"sageattn_varlen: q, k, v must have one dtype, got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    if k.shape != v.shape:
        raise SageAttentionError(
            f"sageattn_varlen: k and v must have the same shape, got {tuple(k.shape)} and "
            f"{tuple(v.shape)}"
        )
    if q.shape[2] != k.shape[2]:
        raise SageAttentionError(
            f"sageattn_varlen: head dims differ: q {q.shape[2]}, k {k.shape[2]}"
        )
    if 0 in q.shape[1:] or 0 in k.shape[1:]:
        raise SageAttentionError(
            f"sageattn_varlen: no heads or head dim (q {tuple(q.shape)}, k {tuple(k.shape)})"
        )
    if q.shape[1] % k.shape[1] != 0:
        raise SageAttentionError(
            f"sageattn_varlen: query heads ({q.shape[1]}) must be a multiple of key/value "
            f"heads ({k.shape[1]}) for grouped-query attention"
        )
    for name, cu in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if (
            not isinstance(cu, torch.Tensor)
            or cu.dim() != 1
            or cu.dtype not in (torch.int32, torch.int64)
        ):
            raise SageAttentionError(
                f"sageattn_varlen: {name} must be a 1-D int32 tensor of sequence offsets "
                "(batch + 1 values from 0)"
            )
        if cu.numel() < 2:
            raise SageAttentionError(
                f"sageattn_varlen: {name} has {cu.numel()} values; a batch of b sequences has b + 1"
            )
        if cu.is_cuda and cu.device != q.device:
            raise SageAttentionError(f"sageattn_varlen: {name} is on {cu.device}, q on {q.device}")
    if cu_seqlens_q.numel() != cu_seqlens_k.numel():
        raise SageAttentionError(
            f"sageattn_varlen: cu_seqlens_q has {cu_seqlens_q.numel()} values and "
            f"cu_seqlens_k {cu_seqlens_k.numel()}: one per sequence boundary each"
        )
    for name, n in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < 2**31:
            raise SageAttentionError(
                f"sageattn_varlen: {name} must be an int from 0 to 2^31 - 1, not {n!r}"
            )
    # Offsets on the host cost nothing to check (on the GPU, reading them would synchronise every
    # call and break CUDA graph capture; there the kernels clamp them and write NaN for a sequence
    # whose offsets do not fit).
    if not torch.compiler.is_compiling():
        for name, cu, total, longest in (
            ("cu_seqlens_q", cu_seqlens_q, q.shape[0], max_seqlen_q),
            ("cu_seqlens_k", cu_seqlens_k, k.shape[0], max_seqlen_k),
        ):
            if not cu.is_cuda:
                _check_offsets(name, cu.tolist(), total, longest)


def _check_offsets(name, offsets, total, longest):
    if offsets[0] != 0:
        raise SageAttentionError(f"sageattn_varlen: {name} must start at 0, not {offsets[0]}")
    lengths = [b - a for a, b in zip(offsets, offsets[1:])]
    for i, n in enumerate(lengths):
        if n < 0:
            raise SageAttentionError(
                f"sageattn_varlen: {name} decreases at sequence {i} ({offsets[i]} -> "
                f"{offsets[i + 1]})"
            )
        if n > longest:
            what = "max_seqlen_q" if name.endswith("_q") else "max_seqlen_k"
            raise SageAttentionError(
                f"sageattn_varlen: sequence {i} has {n} rows in {name}, more than "
                f"{what} = {longest}"
            )
    if offsets[-1] != total:
        raise SageAttentionError(
            f"sageattn_varlen: {name} ends at {offsets[-1]}, but the tensor has {total} rows"
        )


def _sdpa_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, is_causal, sm_scale, return_lse):
    """torch's SDPA per sequence (the fallback): the same bottom-right causal mask, LSE
    [heads_q, total_q]. Reads the offsets on the host."""
    starts_q, starts_k = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    o = torch.zeros_like(q)
    lse = torch.full((q.shape[1], q.shape[0]), float("-inf"), dtype=torch.float32, device=q.device)
    for (q0, q1), (k0, k1) in zip(zip(starts_q, starts_q[1:]), zip(starts_k, starts_k[1:])):
        if q1 <= q0 or k1 <= k0:
            continue  # no queries, or no key to see: zeros, LSE -inf
        part = _sdpa(
            q[q0:q1].unsqueeze(0),
            k[k0:k1].unsqueeze(0),
            v[k0:k1].unsqueeze(0),
            "NHD",
            is_causal,
            sm_scale,
            return_lse,
            None,
            0.0,
        )
        if return_lse:
            part, part_lse = part
            lse[:, q0:q1] = part_lse[0]
        o[q0:q1] = part[0]
    return (o, lse) if return_lse else o


def sageattn_varlen(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_k,
    max_seqlen_q,
    max_seqlen_k,
    is_causal=False,
    sm_scale=None,
    return_lse=False,
    *,
    smooth_k=True,
    qk_quant_gran="per_warp",
    pv_path=None,
    pv_accum_dtype=None,
    strict=None,
    sharp_threshold=SHARP_THRESHOLD,
):
    """Quantized attention over a packed batch of sequences of different lengths.

    q: [total_q, heads_q, head_dim]; k, v: [total_k, heads_kv, head_dim] (heads_q a multiple of
    heads_kv: GQA/MQA); float16 or bfloat16 on a CUDA device of compute capability 8.0+, head
    dims 64, 128, 256 and on Hopper 96 and 192 (others up to 256 zero-padded to the next; above
    128, 16-bit P·V).
    cu_seqlens_q, cu_seqlens_k: int32 offsets, batch + 1 values from 0 to total (on q's device;
    int64 or CPU ones are converted, and CPU ones are checked). max_seqlen_q, max_seqlen_k: the
    longest sequence's lengths (ints), which size the kernels' grids: a sequence longer than
    these comes out as NaN (offsets on the GPU are not read on the host). Sequences may be empty.
    is_causal: bottom-right aligned per sequence. sm_scale: default 1/sqrt(head_dim).
    return_lse: also return the natural-log sum-exp per query row, float32 [heads_q, total_q].
    pv_path: None picks as sageattn does (16-bit P·V up to 8192 query rows on Hopper, FP8 beyond);
    "fp16", "fp8", "fp8_sm90" or "fp16_sm90" ask for that kernel. pv_accum_dtype: with pv_path,
    one of that path's accumulations as its function takes it ("fp32+fp16" on fp8, say); None for
    the path's default. What the kernels do not cover
    (CPU tensors, float32, head_dim > 256) runs torch's SDPA per sequence with one warning per
    cause, or raises with strict=True or SAGEATTENTION_STRICT=1.
    sharp_threshold: the sharp-tile guard, as sageattn's (per sequence: a tile is 64 rows of one
    sequence); None turns it off.
    """
    _validate_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    sharp = sharp_threshold_value(sharp_threshold)
    if pv_path is not None and pv_path not in VARLEN_PATHS:
        raise SageAttentionError(
            f"sageattn_varlen: pv_path must be one of {VARLEN_PATHS} or None, not {pv_path!r}"
        )
    if pv_path is None and pv_accum_dtype is not None:
        raise SageAttentionError(
            "sageattn_varlen: pv_accum_dtype needs a pv_path (each path has its own)"
        )
    if pv_path is not None:
        accumulation_for("sageattn_varlen", pv_path, pv_accum_dtype)
    q_gran = _granularity(qk_quant_gran)
    head_dim = q.shape[2]
    facts, (major, minor) = _call_facts(q, None, 0.0)
    plan = plan_call(
        "sageattn_varlen",
        major,
        minor,
        seq_q=max_seqlen_q,
        seq_k=max_seqlen_k,
        heads_q=q.shape[1],
        heads_kv=k.shape[1],
        head_dim=head_dim,
        is_causal=is_causal,
        return_lse=return_lse,
        path=pv_path,
        pv_accum_dtype=pv_accum_dtype,
        strict=strict,
        instead="pv_path=None picks one that can",
        facts=facts,
    )
    if plan.fallback is not None:
        _fall_back("sageattn_varlen", plan.fallback, strict, how=" per sequence")
        return _sdpa_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, is_causal, sm_scale, return_lse)

    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(head_dim)
    cu_q, cu_k = (
        cu.to(device=q.device, dtype=torch.int32).contiguous()
        for cu in (cu_seqlens_q, cu_seqlens_k)
    )
    if q.shape[0] == 0 or k.shape[0] == 0 or max_seqlen_q == 0 or max_seqlen_k == 0:
        # No query row, or no key row anywhere: every row sees nothing (zeros, LSE -inf). Rows with
        # a bound of 0 are longer than their bound: NaN, as the kernels write it.
        overlong = (max_seqlen_q == 0 and q.shape[0] > 0) or (max_seqlen_k == 0 and k.shape[0] > 0)
        fill = float("nan") if overlong else 0.0
        o = torch.full_like(q, fill)
        lse = torch.full(
            (q.shape[1], q.shape[0]),
            float("nan") if overlong else float("-inf"),
            dtype=torch.float32,
            device=q.device,
        )
        return (o, lse) if return_lse else o

    def attention(q, k, v):
        return torch.ops.sageattention.attention_varlen(
            q,
            k,
            v,
            cu_q,
            cu_k,
            int(max_seqlen_q),
            int(max_seqlen_k),
            bool(is_causal),
            float(scale),
            _PATHS[plan.path],
            _ACCUMULATIONS[plan.accumulation],
            _GRANULARITY[q_gran],
            _GRANULARITY["per_block"],
            bool(smooth_k),
            sharp,
            bool(return_lse),
        )

    o, lse = run_planned(plan, q, k, v, attention, 1, 0, return_lse)
    return (o, lse) if return_lse else o
