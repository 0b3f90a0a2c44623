"""sageattn and the per-path functions: validation with messages a user can act on, dispatch by
compute capability, and the fallback to torch's scaled_dot_product_attention for what the
kernels do not cover (one warning per cause; an error instead in strict mode)."""

import math
import os
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

from . import _manifest, _ops

# The kernel library's facts, from kernels/manifest.py (generated into _manifest.py, as into the
# library's sageattn/manifest.h): the head dims it takes and each path's, the largest head dim of
# the FP8 P·V kernels (above it the 16-bit P·V kernel of the same family runs: fp16_sm90 on
# Hopper, fp16 elsewhere), the head dims only the Hopper kernel takes (elsewhere they are padded
# to 128 and 256), the query heads one call takes (the kernels' grids hold them in their y
# dimension, which CUDA limits to 65,535; _run calls larger ones in slices of the heads), and the
# operator's path and granularity numbers (sageattn.h's enums) and capability-gap names.
SUPPORTED_HEAD_DIMS = _manifest.SUPPORTED_HEAD_DIMS
MAX_QUERY_HEADS = _manifest.MAX_QUERY_HEADS
FP8_PV_MAX_HEAD_DIM = _manifest.FP8_PV_MAX_HEAD_DIM
HOPPER_ONLY_HEAD_DIMS = _manifest.HOPPER_ONLY_HEAD_DIMS


def head_dims_for(path):
    """The head dims a path's kernel takes (sageattn::path_supports_head_dim); others are
    zero-padded to the next of these."""
    return _manifest.PATH_HEAD_DIMS[path]


_LAYOUTS = _manifest.LAYOUTS
_PATHS = _manifest.PATHS
_GRANULARITY = _manifest.GRANULARITIES
CAPABILITY_GAPS = _manifest.CAPABILITY_GAPS
_warned: set[str] = set()


class SageAttentionError(ValueError):
    """Raised for inputs sageattn cannot take, or in strict mode for what it would fall back on."""


_capabilities: dict = {}


def _capability(device):
    """(major, minor) of a CUDA device, asked of the driver once per device: sageattn runs on
    every decode step of a generation loop, where microseconds of Python show."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    cc = _capabilities.get(index)
    if cc is None:
        cc = _capabilities[index] = torch.cuda.get_device_capability(index)
    return cc


def _strict(strict):
    if strict is not None:
        return bool(strict)
    return os.environ.get("SAGEATTENTION_STRICT", "0") not in ("", "0", "false", "False")


# Query lengths up to which sageattn runs the Hopper kernel's 16-bit P·V (fp16_sm90) instead of
# its FP8 one: it meets the accuracy bar where FP8 P·V does not (docs/kernels.md, "Accuracy"),
# at some speed (docs/benchmarks.md, the fp16-PV and fp8-PV columns; kernels/NOTES.md,
# sm90-pv16-path); below 4k most calls go to SDPA anyway (uses_sdpa_for_short_queries). The
# number is the manifest's; the library's rule over it (sageattn.h: default_pv_path) and this
# package's are compared by test_api_cpu.py.
HOPPER_PV16_MAX_QUERY_LEN = _manifest.HOPPER_PV16_MAX_QUERY_LEN
# The sharp-tile guard's default threshold in logits (the manifest's): tiles with a row whose
# largest logit exceeds it are computed again with 16-bit Q·Kᵀ.
SHARP_THRESHOLD = _manifest.SHARP_THRESHOLD

# Calls the kernels cannot make pay: few queries against K/V (a generation loop's decode steps,
# speculative decoding, short chunks, cross-attention of a few latents) are bound by reading K and
# V, which the kernels read three times (the 16-bit originals to quantize them, then the INT8/FP8
# copies they wrote) and torch's SDPA once; short square calls are bound by fixed costs (two more
# launches, more host time, a CTA's set-up and epilogue against few key blocks). sageattn() gives
# these to torch's SDPA, which is then faster and exact; the per-path functions always run their
# kernel. The limits below are where an H100 measures the kernel slower, d=64 and 128, MHA and
# GQA, batch 1-32 (docs/benchmarks.md, "Where sageattn() hands over to SDPA" and "Decode", with
# the figures; bench/sageattn_bench.py --suite decode,short). Causal calls of more than one
# query against more keys go to SDPA only when few and MHA: torch repeats K and V for a
# bottom-right causal GQA mask, and its bottom-right kernel is FA2, slower than the kernel from
# 256 queries. Off with sageattn(..., sdpa_for_short_queries=False) or
# SAGEATTENTION_SDPA_SHORT_QUERIES=0.
SDPA_MAX_QUERY_LEN = 1024  # no mask: up to this many queries, any number of keys
SDPA_MAX_SHORT_LEN = 3072  # no mask: queries and keys both up to this (the kernel no
# faster than SDPA in 16 shapes of 3072 tokens, d 64/128, b 1-8)
SDPA_MAX_CAUSAL_SHORT_LEN = 4096  # causal, as many queries as keys: up to this
SDPA_MAX_CAUSAL_QUERY_LEN = 128  # causal, fewer queries than keys, MHA: up to this many queries


def uses_sdpa_for_short_queries(
    seq_q, seq_k, is_causal, return_lse, gqa=False, sdpa_for_short_queries=None
):
    """Whether sageattn() gives a call of seq_q queries and seq_k keys to torch's SDPA by the rule
    above (gqa: fewer KV heads than query heads). Never with return_lse (SDPA returns no
    log-sum-exp) nor for causal calls with more queries than keys (rows with no key to see)."""
    if sdpa_for_short_queries is None:
        sdpa_for_short_queries = os.environ.get("SAGEATTENTION_SDPA_SHORT_QUERIES", "1") not in (
            "0",
            "false",
            "False",
        )
    if not sdpa_for_short_queries or return_lse:
        return False
    if not is_causal or seq_q == 1:  # one query sees every key: the mask changes nothing
        return seq_q <= SDPA_MAX_QUERY_LEN or max(seq_q, seq_k) <= SDPA_MAX_SHORT_LEN
    if seq_q == seq_k:
        return seq_q <= SDPA_MAX_CAUSAL_SHORT_LEN
    return seq_q < seq_k and seq_q <= SDPA_MAX_CAUSAL_QUERY_LEN and not gqa


def path_for_capability(major, minor, seq_q=None, head_dim=None):
    """The P·V path sageattn uses on a GPU, or None when it has no kernel for it.

    sm80: 16-bit P·V; sm89 (Ada) and sm100+ (Blackwell): FP8 P·V with mma.sync, native there;
    sm90 (Hopper): the wgmma kernel when the wheel has sm_90a code, with FP8 P·V ("fp8_sm90"),
    or with 16-bit P·V ("fp16_sm90") for query lengths up to HOPPER_PV16_MAX_QUERY_LEN when
    seq_q is given; else 16-bit P·V on mma.sync (FP8 mma.sync is emulated through f16 on
    Hopper; docs/kernels.md). Head dims above FP8_PV_MAX_HEAD_DIM take the 16-bit P·V path.
    """
    cc = major * 10 + minor
    if cc < 80:
        return None
    pv16_only = head_dim is not None and head_dim > FP8_PV_MAX_HEAD_DIM
    if cc == 90:
        if not _ops.HAS_SM90A:
            return "fp16"
        short = seq_q is not None and seq_q <= HOPPER_PV16_MAX_QUERY_LEN
        return "fp16_sm90" if short or pv16_only else "fp8_sm90"
    if (cc == 89 or cc >= 100) and not pv16_only:
        return "fp8"
    return "fp16"


def pv16_for_head_dim(caller, path, head_dim, strict):
    """The path a call asked for, or where FP8 P·V does not take its head dim (above
    FP8_PV_MAX_HEAD_DIM) the 16-bit P·V path of the same kernel family, with one warning (strict
    mode raises instead)."""
    if path not in ("fp8", "fp8_sm90") or head_dim <= FP8_PV_MAX_HEAD_DIM:
        return path
    instead = "fp16_sm90" if path == "fp8_sm90" else "fp16"
    if _strict(strict):
        raise SageAttentionError(
            f"{caller}: FP8 P·V ({path}) takes head dims up to {FP8_PV_MAX_HEAD_DIM}, not "
            f"{head_dim}; the {instead} path (16-bit P·V) takes up to "
            f"{max(SUPPORTED_HEAD_DIMS)}: call sageattn or set SAGEATTENTION_STRICT=0"
        )
    _warn_once(
        f"head_dim {head_dim} on {path}",
        f"{caller}: FP8 P·V ({path}) takes head dims up to {FP8_PV_MAX_HEAD_DIM}; head_dim "
        f"{head_dim} runs with 16-bit P·V ({instead}), which is more accurate",
        stacklevel=4,
    )
    return instead


def capability_gap(path, major, minor, has_sm90a):
    """Why `path` cannot run on a GPU of compute capability major.minor (a name of
    CAPABILITY_GAPS; "none" when it can), given whether the wheel has sm_90a code: the library's
    rule (sageattn.h: capability_gap), applied here before the op is called so that the error is
    Python's and torch.compile traces no call to ask."""
    cc = major * 10 + minor
    if cc < 80:
        return "below_sm80"
    if path == "fp8" and cc < 89:
        return "fp8_needs_sm89"
    if path in ("fp8_sm90", "fp16_sm90"):
        if cc != 90:
            return "hopper_only"
        if not has_sm90a:
            return "no_sm90a_code"
    return "none"


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


def _fallback_reason(q, attn_mask, dropout_p):
    # First: a library that does not load (a torch older than the wheel needs, a broken install)
    # is what the user must hear about, whatever the tensors.
    if not _ops.available():
        return f"the compiled kernels could not be loaded ({_ops.LOAD_ERROR})"
    if not q.is_cuda:
        if not torch.cuda.is_available():
            return "the tensors are on the CPU (torch.cuda.is_available() is False)"
        return f"the tensors are on {q.device}, not a CUDA device"
    if q.dtype not in (torch.float16, torch.bfloat16):
        return f"dtype {q.dtype} (the kernels take float16 and bfloat16)"
    if q.shape[-1] > max(SUPPORTED_HEAD_DIMS):
        return (
            f"head_dim {q.shape[-1]} (supported: {', '.join(map(str, SUPPORTED_HEAD_DIMS))}; "
            "others up to the largest are zero-padded to the next the kernel takes)"
        )
    if attn_mask is not None:
        return "an attn_mask (the kernels support causal masking only)"
    if dropout_p:
        return "dropout"
    major, minor = _capability(q.device)
    if path_for_capability(major, minor) is None:
        return f"compute capability {major}.{minor} (sageattn needs 8.0 or newer)"
    return None


def _warn_once(cause, message, stacklevel):
    """warnings.warn(message) the first time `cause` comes up in the process (stacklevel: the
    user's frame, counted from the caller)."""
    if cause not in _warned:
        _warned.add(cause)
        warnings.warn(message, stacklevel=stacklevel + 1)


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
):
    """short_queries: whether the short-query rule applies (sageattn's sdpa_for_short_queries:
    None for the environment's choice); False for the per-path functions."""
    _validate(q, k, v, tensor_layout)
    sharp = sharp_threshold_value(sharp_threshold)
    reason = _fallback_reason(q, attn_mask, dropout_p)
    if reason is not None:
        _fall_back("sageattn", reason, strict, stacklevel=4)
        return _sdpa(q, k, v, tensor_layout, is_causal, sm_scale, return_lse, attn_mask, dropout_p)
    h, s = (1, 2) if tensor_layout == "HND" else (2, 1)  # the heads' and the sequence's dims
    if short_queries is not False and uses_sdpa_for_short_queries(
        q.shape[s], k.shape[s], is_causal, return_lse, q.shape[h] != k.shape[h], short_queries
    ):
        return _sdpa(q, k, v, tensor_layout, is_causal, sm_scale, False, None, 0.0)
    major, minor = _capability(q.device)
    if path == "fp16" and (major, minor) == (9, 0) and _ops.HAS_SM90A:
        path = "fp16_sm90"  # the same algorithm on the Hopper kernel: 1.5-1.7x the mma.sync one
    gap = capability_gap(path, major, minor, _ops.HAS_SM90A)
    if gap == "fp8_needs_sm89":
        raise SageAttentionError(
            f"sageattn: the FP8 P·V kernels need compute capability 8.9 or newer; "
            f"{q.device} is {major}.{minor} (use sageattn_qk_int8_pv_fp16_cuda)"
        )
    if gap == "hopper_only":
        raise SageAttentionError(
            f"sageattn: sageattn_qk_int8_pv_fp8_cuda_sm90 runs on Hopper (compute "
            f"capability 9.0) only; {q.device} is {major}.{minor} (use sageattn)"
        )
    if gap == "no_sm90a_code":
        raise SageAttentionError(
            "sageattn: this wheel has no sm_90a code for the Hopper kernel; build it "
            "with 9.0a in its architectures (use sageattn_qk_int8_pv_fp16_cuda)"
        )
    head_dim = q.shape[3]
    path = pv16_for_head_dim("sageattn", path, head_dim, strict)
    padded = next(d for d in head_dims_for(path) if d >= head_dim)  # the next the kernel takes
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(head_dim)
    if padded != head_dim:  # other head dims are zero-padded: the dot products do not change
        q, k, v = (F.pad(t, (0, padded - head_dim)) for t in (q, k, v))
    q, k, v = (
        t if _rows_aligned(t) else t.clone(memory_format=torch.contiguous_format) for t in (q, k, v)
    )

    def attention(q, k, v):
        return torch.ops.sageattention.attention(
            q,
            k,
            v,
            _LAYOUTS[tensor_layout],
            bool(is_causal),
            float(scale),
            _PATHS[path],
            _GRANULARITY[q_gran],
            _GRANULARITY[k_gran],
            bool(smooth_k),
            sharp,
            bool(return_lse),
        )

    if q.shape[h] <= MAX_QUERY_HEADS:
        o, lse = attention(q, k, v)
    else:
        parts = [
            attention(
                q.narrow(h, first, n), k.narrow(h, kv_first, kv_n), v.narrow(h, kv_first, kv_n)
            )
            for first, n, kv_first, kv_n in _head_slices(q.shape[h], k.shape[h])
        ]
        o = torch.cat([part[0] for part in parts], dim=h)
        lse = torch.cat([part[1] for part in parts], dim=1) if return_lse else parts[0][1]
    if padded != head_dim:
        o = o[..., :head_dim]
    return (o, lse) if return_lse else o


def _head_slices(heads_q, heads_kv):
    """(first query head, count, first KV head, count) of calls of at most MAX_QUERY_HEADS query
    heads each, every slice whole groups of one KV head's query heads, or part of one group."""
    group = heads_q // heads_kv
    first = 0
    while first < heads_q:
        if group <= MAX_QUERY_HEADS:
            n = min(MAX_QUERY_HEADS // group * group, heads_q - first)
        else:  # one KV head's group alone is too many: slices of it
            n = min(MAX_QUERY_HEADS, group - first % group)
        yield first, n, first // group, max(1, n // group)
        first += n


def _check_pv_accum(pv_accum_dtype, supported):
    if pv_accum_dtype != supported:
        raise SageAttentionError(
            f"sageattn: pv_accum_dtype {pv_accum_dtype!r} not supported here; "
            f"supported: {supported!r}"
        )


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
    if isinstance(q, torch.Tensor) and q.is_cuda:
        major, minor = _capability(q.device)
        seq_q = q.shape[2 if tensor_layout == "HND" else 1] if q.dim() == 4 else None
        path = path_for_capability(major, minor, seq_q, q.shape[-1]) or "fp16"
    else:
        path = "fp16"
    return _run(
        q,
        k,
        v,
        tensor_layout,
        is_causal,
        sm_scale,
        return_lse,
        path,
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
    code, the wgmma kernel ("fp16_sm90"). pv_accum_dtype: "fp32" (the only one here).
    sharp_threshold: as sageattn's."""
    _check_pv_accum(pv_accum_dtype, "fp32")
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

    pv_accum_dtype: "fp32+fp32", two-level FP32 accumulation (a fresh accumulator per key block
    added into FP32), the only one here. On sm90 the FP8 mma.sync is emulated; see docs/kernels.md.
    sharp_threshold: as sageattn's.
    """
    _check_pv_accum(pv_accum_dtype, "fp32+fp32")
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

    pv_accum_dtype: "fp32+fp32" (two-level FP32 accumulation), the only one here. sageattn uses
    this kernel on compute capability 9.0 when the wheel has sm_90a code. sharp_threshold: as
    sageattn's.
    """
    _check_pv_accum(pv_accum_dtype, "fp32+fp32")
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
    )
