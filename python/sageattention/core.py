"""sageattn and the per-path functions: validation with messages a user can act on, dispatch by
compute capability, and the fallback to torch's scaled_dot_product_attention for what the
kernels do not cover (one warning per cause; an error instead in strict mode)."""

import math

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

from . import _manifest, _ops
from . import plan as _plan

# The kernel library's facts (kernels/manifest.py, generated into _manifest.py) and the rules
# over them that decide where a call goes live in plan.py; the names below are this module's
# public face for them.
SUPPORTED_HEAD_DIMS = _plan.SUPPORTED_HEAD_DIMS
MAX_QUERY_HEADS = _plan.MAX_QUERY_HEADS
FP8_PV_MAX_HEAD_DIM = _plan.FP8_PV_MAX_HEAD_DIM
HOPPER_ONLY_HEAD_DIMS = _plan.HOPPER_ONLY_HEAD_DIMS
HOPPER_PV16_MAX_QUERY_LEN = _plan.HOPPER_PV16_MAX_QUERY_LEN
CAPABILITY_GAPS = _plan.CAPABILITY_GAPS
SageAttentionError = _plan.SageAttentionError
head_dims_for = _plan.head_dims_for
path_for_capability = _plan.path_for_capability
capability_gap = _plan.capability_gap
uses_sdpa_for_short_queries = _plan.uses_sdpa_for_short_queries
_head_slices = _plan.head_slices
_strict = _plan.strict_mode
_warn_once = _plan.warn_once
_warned = _plan._warned  # the same set: tests clear it

_LAYOUTS = _manifest.LAYOUTS
_PATHS = _manifest.PATHS
_ACCUMULATIONS = _manifest.ACCUMULATIONS
_GRANULARITY = _manifest.GRANULARITIES

_capabilities: dict = {}


def _capability(device):
    """(major, minor) of a CUDA device, asked of the driver once per device: sageattn runs on
    every decode step of a generation loop, where microseconds of Python show."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    cc = _capabilities.get(index)
    if cc is None:
        cc = _capabilities[index] = torch.cuda.get_device_capability(index)
    return cc


# The sharp-tile guard's default threshold in logits (the manifest's): tiles with a row whose
# largest logit exceeds it are computed again with 16-bit Q·Kᵀ.
SHARP_THRESHOLD = _manifest.SHARP_THRESHOLD


def _validate(q, k, v, tensor_layout):
    # Shapes are read once: sageattn runs on every decode step, where each microsecond shows.
    if tensor_layout not in _LAYOUTS:
        raise SageAttentionError(
            f"sageattn: tensor_layout must be 'HND' or 'NHD', not {tensor_layout!r}"
        )
    shapes = []
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise SageAttentionError(
                f"sageattn: {name} must be a torch.Tensor, not {type(t).__name__}"
            )
        shape = t.shape
        if len(shape) != 4:
            dims = (
                "[batch, heads, seq, head_dim]"
                if tensor_layout == "HND"
                else "[batch, seq, heads, head_dim]"
            )
            raise SageAttentionError(
                f"sageattn: {name} must be 4-D {dims} for tensor_layout="
                f"'{tensor_layout}', got shape {tuple(shape)}"
            )
        if 0 in shape:
            raise SageAttentionError(f"sageattn: {name} is empty (shape {tuple(shape)})")
        shapes.append(shape)
    qs, ks, vs = shapes
    if not (q.device == k.device == v.device):
        raise SageAttentionError(
            f"sageattn: q, k, v must be on one device, got {q.device}, {k.device}, {v.device}"
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise SageAttentionError(
            f"sageattn: q, k, v must have one dtype, got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    h, s = (1, 2) if tensor_layout == "HND" else (2, 1)
    if not (qs[0] == ks[0] == vs[0]):
        raise SageAttentionError(f"sageattn: batch sizes differ: q {qs[0]}, k {ks[0]}, v {vs[0]}")
    if ks[h] != vs[h] or ks[s] != vs[s]:
        raise SageAttentionError(
            f"sageattn: k and v must have the same heads and length, got k "
            f"{tuple(ks)} and v {tuple(vs)}"
        )
    if not (qs[3] == ks[3] == vs[3]):
        raise SageAttentionError(f"sageattn: head dims differ: q {qs[3]}, k {ks[3]}, v {vs[3]}")
    if qs[h] % ks[h] != 0:
        raise SageAttentionError(
            f"sageattn: query heads ({qs[h]}) must be a multiple of key/value "
            f"heads ({ks[h]}) for grouped-query attention"
        )


def _call_facts(q, attn_mask, dropout_p):
    """What plan_call needs to know of a call's tensors to decide whether the kernels can run it,
    and the device's compute capability (None, None off CUDA)."""
    facts = _plan.CallFacts(
        load_error=None if _ops.available() else _ops.LOAD_ERROR,
        device=str(q.device),
        cuda_available=torch.cuda.is_available() if not q.is_cuda else True,
        dtype=str(q.dtype),
        sixteen_bit=q.dtype in (torch.float16, torch.bfloat16),
        has_mask=attn_mask is not None,
        dropout_p=float(dropout_p or 0.0),
    )
    return facts, (_capability(q.device) if q.is_cuda else (None, None))


def _fall_back(caller, reason, strict, how="", stacklevel=3):
    """What a fallback for `reason` does first: in strict mode it raises; else it warns, once per
    cause per process (stacklevel: the user's frame, counted from here)."""
    if _strict(strict):
        raise SageAttentionError(
            f"{caller}: cannot run the SageAttention kernels on {reason}; "
            "set SAGEATTENTION_STRICT=0 to fall back to scaled_dot_product_attention"
        )
    _warn_once(
        reason,
        f"{caller}: falling back to torch scaled_dot_product_attention{how} for {reason}",
        stacklevel,
    )


def _bottom_right_mask(lq, lk, device):
    """The causal mask as the kernels align it: query i sees keys j <= i + lk - lq."""
    return torch.ones(lq, lk, dtype=torch.bool, device=device).tril(lk - lq)


def _sdpa(q, k, v, tensor_layout, is_causal, sm_scale, return_lse, attn_mask, dropout_p):
    if tensor_layout == "NHD":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    gqa = q.shape[1] != k.shape[1]
    lq, lk = q.shape[2], k.shape[2]
    # The causal mask is bottom-right aligned (the last query sees every key), as the kernels
    # apply it; SDPA's is_causal is top-left, the same only when lq == lk. More queries than keys
    # leave the first rows with no key, which the kernels write as zeros: computed here too.
    if return_lse or (is_causal and lq > lk):
        if attn_mask is not None or dropout_p:
            what = "return_lse" if return_lse else "is_causal with more queries than keys"
            raise SageAttentionError(f"sageattn: {what} with attn_mask or dropout is not supported")
        qf, kf, vf = (t.float() for t in (q, k, v))
        if gqa:
            kf = kf.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
            vf = vf.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
        scale = sm_scale if sm_scale is not None else 1 / math.sqrt(q.shape[-1])
        s = qf @ kf.transpose(-1, -2) * scale
        if is_causal:
            s = s.masked_fill(~_bottom_right_mask(lq, lk, s.device), float("-inf"))
        lse = torch.logsumexp(s, dim=-1)
        o = (torch.softmax(s, dim=-1).nan_to_num(0.0) @ vf).to(q.dtype)
    else:
        if is_causal and lq != lk and attn_mask is None:  # fewer queries than keys
            if lq == 1:
                pass  # one query sees every key
            elif torch.compiler.is_compiling():  # Dynamo does not trace torch's CausalBias
                attn_mask = _bottom_right_mask(lq, lk, q.device)
            else:  # lets SDPA pick a kernel that applies the mask itself
                attn_mask = causal_lower_right(lq, lk)
            is_causal = False
        o = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=attn_mask,
            dropout_p=dropout_p,
            is_causal=is_causal,
            scale=sm_scale,
            enable_gqa=gqa,
        )
        lse = None
    if tensor_layout == "NHD":
        o = o.transpose(1, 2)
    return (o, lse) if return_lse else o


def _rows_aligned(t):
    """Whether the kernels can read t as it is: they load rows 16 bytes at a time, so the last dim
    must be dense and every row must start 16-byte aligned (the other strides and the storage
    offset multiples of 8 elements; storage from torch's allocator is aligned further). Under
    torch.compile the offset is not looked at (Dynamo cannot trace storage_offset()): a misaligned
    input there meets the library's error instead of a copy. (Any rank: sageattn's 4-D tensors and
    sageattn_varlen's packed 3-D ones.)"""
    if t.stride(-1) != 1 or any(s % 8 for s in t.stride()[:-1]):
        return False
    return torch.compiler.is_compiling() or t.storage_offset() % 8 == 0


def sharp_threshold_value(sharp_threshold):
    """The operator's number for a sharp_threshold argument: None turns the guard off (0)."""
    if sharp_threshold is None:
        return 0.0
    if (
        isinstance(sharp_threshold, bool)
        or not isinstance(sharp_threshold, (int, float))
        or not sharp_threshold >= 0
    ):
        raise SageAttentionError(
            f"sageattn: sharp_threshold must be a non-negative number of logits, or None "
            f"for no sharp-tile guard; got {sharp_threshold!r}"
        )
    return float(sharp_threshold)


def _run(
    q,
    k,
    v,
    tensor_layout,
    is_causal,
    sm_scale,
    return_lse,
    path,
    q_gran,
    k_gran,
    smooth_k,
    strict,
    attn_mask=None,
    dropout_p=0.0,
    short_queries=False,
    sharp_threshold=SHARP_THRESHOLD,
    pv_accum_dtype=None,
):
    """path: the kernel path a per-path function asks for, or None for sageattn's choice;
    pv_accum_dtype: one of that path's accumulations by name (None: its default).
    short_queries: whether the short-query rule applies (sageattn's sdpa_for_short_queries: None
    for the environment's choice); False for the per-path functions. (plan.plan_call decides.)"""
    _validate(q, k, v, tensor_layout)
    sharp = sharp_threshold_value(sharp_threshold)
    h, s = (1, 2) if tensor_layout == "HND" else (2, 1)  # the heads' and the sequence's dims
    facts, (major, minor) = _call_facts(q, attn_mask, dropout_p)
    plan = _plan.plan_call(
        "sageattn",
        major,
        minor,
        seq_q=q.shape[s],
        seq_k=k.shape[s],
        heads_q=q.shape[h],
        heads_kv=k.shape[h],
        head_dim=q.shape[3],
        is_causal=is_causal,
        return_lse=return_lse,
        path=path,
        pv_accum_dtype=pv_accum_dtype,
        short_queries=short_queries,
        strict=strict,
        instead="sageattn picks a path this GPU runs",
        user_frames=2,
        facts=facts,
    )
    if plan.fallback is not None:
        _fall_back("sageattn", plan.fallback, strict, stacklevel=4)
        return _sdpa(q, k, v, tensor_layout, is_causal, sm_scale, return_lse, attn_mask, dropout_p)
    if plan.sdpa:
        return _sdpa(q, k, v, tensor_layout, is_causal, sm_scale, False, None, 0.0)
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(q.shape[3])

    def attention(q, k, v):
        return torch.ops.sageattention.attention(
            q,
            k,
            v,
            _LAYOUTS[tensor_layout],
            bool(is_causal),
            float(scale),
            _PATHS[plan.path],
            _ACCUMULATIONS[plan.accumulation],
            _GRANULARITY[q_gran],
            _GRANULARITY[k_gran],
            bool(smooth_k),
            sharp,
            bool(return_lse),
        )

    o, lse = run_planned(plan, q, k, v, attention, h, 1, return_lse)
    return (o, lse) if return_lse else o


def run_planned(plan, q, k, v, attention, head_axis, lse_head_axis, return_lse):
    """(O, LSE) of a planned kernel call: Q, K and V padded to the plan's head dim (zeros leave
    the dot products as they are) and made readable by the kernels, `attention` called on them
    whole or on slices of the heads (plan.sliced; the slices' LSE joined when return_lse), O cut
    back to the call's head dim."""
    head_dim = q.shape[-1]
    if plan.padded_head_dim != head_dim:
        q, k, v = (F.pad(t, (0, plan.padded_head_dim - head_dim)) for t in (q, k, v))
    q, k, v = (
        t if _rows_aligned(t) else t.clone(memory_format=torch.contiguous_format) for t in (q, k, v)
    )
    if not plan.sliced:
        o, lse = attention(q, k, v)
    else:
        parts = [
            attention(
                q.narrow(head_axis, first, n),
                k.narrow(head_axis, kv_first, kv_n),
                v.narrow(head_axis, kv_first, kv_n),
            )
            for first, n, kv_first, kv_n in _head_slices(q.shape[head_axis], k.shape[head_axis])
        ]
        o = torch.cat([part[0] for part in parts], dim=head_axis)
        lse = torch.cat([p[1] for p in parts], dim=lse_head_axis) if return_lse else parts[0][1]
    if plan.padded_head_dim != head_dim:
        o = o[..., :head_dim]
    return o, lse


def _granularity(qk_quant_gran):
    if qk_quant_gran not in ("per_warp", "per_block"):
        why = (
            " ('per_thread' is not built: with logits below ~100 'per_warp' is within 0.0004 cosine"
            " of it, and on sharper rows its finer scales take about a fifth off the loss;"
            ' docs/kernels.md, "Sharp attention")'
            if qk_quant_gran == "per_thread"
            else ""
        )
        raise SageAttentionError(
            f"sageattn: qk_quant_gran must be 'per_warp' or 'per_block', not {qk_quant_gran!r}{why}"
        )
    return qk_quant_gran


def sageattn(
    q,
    k,
    v,
    tensor_layout="HND",
    is_causal=False,
    sm_scale=None,
    return_lse=False,
    *,
    attn_mask=None,
    dropout_p=0.0,
    strict=None,
    sdpa_for_short_queries=None,
    sharp_threshold=SHARP_THRESHOLD,
):
    """Quantized attention: softmax(q kᵀ · sm_scale) v with INT8 Q·Kᵀ and FP8 or 16-bit P·V.

    q: [batch, heads_q, seq_q, head_dim] ("HND") or [batch, seq_q, heads_q, head_dim] ("NHD");
    k, v likewise with heads_kv heads (heads_q a multiple: GQA/MQA). float16 or bfloat16 on a
    CUDA device of compute capability 8.0+; head dims 64, 128 and 256, and 96 and 192 on Hopper
    (others up to 256 are zero-padded to the next the kernel takes: 80 runs as 96 on Hopper and
    128 elsewhere, 160 as 192 or 256; above 128, 16-bit P·V).
    is_causal: bottom-right aligned when seq_q != seq_k. sm_scale: default 1/sqrt(head_dim).
    return_lse: also return the natural-log sum-exp per query row, float32 [batch, heads_q, seq_q].
    P·V: FP8 with each key block summed in FP16 on compute capability 8.9, 12.0 and 12.1 (as
    sageattn_qk_int8_pv_fp8_cuda's "fp32+fp16"), FP8 or 16-bit with FP32 sums elsewhere.
    What the kernels do not cover (CPU tensors, float32, head_dim > 256, attn_mask, dropout) runs
    torch's scaled_dot_product_attention with one warning per cause, or raises with strict=True
    or SAGEATTENTION_STRICT=1.
    sdpa_for_short_queries: calls too short for the kernels to pay (decode steps, short prompts;
    the rule: uses_sdpa_for_short_queries) run torch's SDPA, faster there and exact; False keeps
    the kernel (default: True, or SAGEATTENTION_SDPA_SHORT_QUERIES=0 in the environment for
    False). Not with return_lse. Strict mode does not change this choice.
    sharp_threshold: the sharp-tile guard. A 64-row query tile where some row's largest logit
    (sm_scale·q·k, after K's mean is subtracted: its distance from the row's mean logit) exceeds
    this is computed again with 16-bit Q·Kᵀ, where INT8 Q·Kᵀ would lose the winning keys
    (nearly one-hot rows, as with massive activations); None turns it off. Default 100: INT8
    keeps a cosine of ~0.998 to full precision below it and falls to ~0.975 on one-hot rows.
    """
    return _run(
        q,
        k,
        v,
        tensor_layout,
        is_causal,
        sm_scale,
        return_lse,
        None,
        "per_warp",
        "per_block",
        True,
        strict,
        attn_mask,
        dropout_p,
        short_queries=sdpa_for_short_queries,
        sharp_threshold=sharp_threshold,
    )


def sageattn_qk_int8_pv_fp16_cuda(
    q,
    k,
    v,
    tensor_layout="HND",
    is_causal=False,
    qk_quant_gran="per_warp",
    sm_scale=None,
    pv_accum_dtype="fp32",
    smooth_k=True,
    return_lse=False,
    strict=None,
    *,
    sharp_threshold=SHARP_THRESHOLD,
):
    """INT8 Q·Kᵀ, 16-bit P·V (P and V in the inputs' type), FP32 accumulation: the most accurate
    path (relative L1 ≤ 0.03 against full precision where the FP8 P·V paths measure ~0.04 on
    Gaussian inputs; docs/kernels.md). mma.sync on sm80+; on Hopper, when the wheel has sm_90a
    code, the wgmma kernel ("fp16_sm90"). pv_accum_dtype: "fp32" (into O in FP32), or
    "fp16+fp32" (each 64-key block's P·V summed in FP16, P and V in FP16, added into FP32 O:
    twice the rate on GeForce cards; tiles whose block sums leave FP16's range are computed
    again in FP32; Hopper's wgmma kernel sums in FP32 whichever is asked). sharp_threshold: as
    sageattn's."""
    _plan.accumulation_for("sageattn_qk_int8_pv_fp16_cuda", "fp16", pv_accum_dtype)
    return _run(
        q,
        k,
        v,
        tensor_layout,
        is_causal,
        sm_scale,
        return_lse,
        "fp16",
        _granularity(qk_quant_gran),
        "per_block",
        smooth_k,
        strict,
        sharp_threshold=sharp_threshold,
        pv_accum_dtype=pv_accum_dtype,
    )


def sageattn_qk_int8_pv_fp8_cuda(
    q,
    k,
    v,
    tensor_layout="HND",
    is_causal=False,
    qk_quant_gran="per_warp",
    sm_scale=None,
    pv_accum_dtype="fp32+fp32",
    smooth_k=True,
    return_lse=False,
    strict=None,
    *,
    sharp_threshold=SHARP_THRESHOLD,
):
    """INT8 Q·Kᵀ, FP8 e4m3 P·V with a per-channel V scale (mma.sync, sm89+).

    pv_accum_dtype: how each key block's P·V is summed before it is added into FP32 O:
    "fp32+fp32" in FP32; "fp32+fp16" in FP16 by the FP16-accumulating FP8 mma (SageAttention2++:
    twice the FP32 instruction's rate on GeForce cards, V scaled to 2.25 so that a block's sum
    stays inside FP16; docs/kernels.md, "Accumulation"). On sm90 the FP8 mma.sync is emulated;
    see docs/kernels.md. sharp_threshold: as sageattn's.
    """
    _plan.accumulation_for("sageattn_qk_int8_pv_fp8_cuda", "fp8", pv_accum_dtype)
    return _run(
        q,
        k,
        v,
        tensor_layout,
        is_causal,
        sm_scale,
        return_lse,
        "fp8",
        _granularity(qk_quant_gran),
        "per_block",
        smooth_k,
        strict,
        sharp_threshold=sharp_threshold,
        pv_accum_dtype=pv_accum_dtype,
    )


def sageattn_qk_int8_pv_fp8_cuda_sm90(
    q,
    k,
    v,
    tensor_layout="HND",
    is_causal=False,
    qk_quant_gran="per_warp",
    sm_scale=None,
    pv_accum_dtype="fp32+fp32",
    smooth_k=True,
    return_lse=False,
    strict=None,
    *,
    sharp_threshold=SHARP_THRESHOLD,
):
    """INT8 Q·Kᵀ, FP8 e4m3 P·V on Hopper's wgmma (TMA, warp specialisation; sm_90a only).

    pv_accum_dtype: "fp32+fp32" (two-level FP32 accumulation), the only one this path has.
    sageattn uses this kernel on compute capability 9.0 when the wheel has sm_90a code.
    sharp_threshold: as sageattn's.
    """
    _plan.accumulation_for("sageattn_qk_int8_pv_fp8_cuda_sm90", "fp8_sm90", pv_accum_dtype)
    return _run(
        q,
        k,
        v,
        tensor_layout,
        is_causal,
        sm_scale,
        return_lse,
        "fp8_sm90",
        _granularity(qk_quant_gran),
        "per_block",
        smooth_k,
        strict,
        sharp_threshold=sharp_threshold,
        pv_accum_dtype=pv_accum_dtype,
    )
