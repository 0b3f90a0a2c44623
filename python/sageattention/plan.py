"""Where a call goes, decided in one place for every entry point (sageattn, the per-path
functions, sageattn_varlen): the hand-over of short calls to torch's SDPA, the kernel path, the
head dim the kernel runs at, and whether the heads go in slices.

plan_call() is a pure function of the call's sizes, what its tensors are (CallFacts: device,
dtype, mask, dropout; whether the kernels loaded) and the GPU's compute capability, over the
kernel library's facts (_manifest.py, generated from kernels/manifest.py). It runs in Python, not
as an operator: a decode loop calls sageattn once per step per layer, where an operator call's
host time would show, and under torch.compile each rule below is a comparison of the call's
(possibly symbolic) sizes, so the compiled graph guards on exactly the bounds it depends on. The
library checks the same facts before it launches (sageattn.h: capability_gap, pv_path_for,
path_supports_head_dim); test_api_cpu.py and test_library_facts.py compare the two.
"""

from __future__ import annotations

import os
import warnings
from typing import NamedTuple

from . import _manifest, _ops

SUPPORTED_HEAD_DIMS = _manifest.SUPPORTED_HEAD_DIMS
MAX_QUERY_HEADS = _manifest.MAX_QUERY_HEADS
FP8_PV_MAX_HEAD_DIM = _manifest.FP8_PV_MAX_HEAD_DIM
HOPPER_ONLY_HEAD_DIMS = _manifest.HOPPER_ONLY_HEAD_DIMS
# Query lengths up to which sageattn runs the Hopper kernel's 16-bit P·V (fp16_sm90) instead of
# its FP8 one: it meets the accuracy bar where FP8 P·V does not (docs/kernels.md, "Accuracy"),
# at some speed (docs/benchmarks.md; kernels/NOTES.md, sm90-pv16-path).
HOPPER_PV16_MAX_QUERY_LEN = _manifest.HOPPER_PV16_MAX_QUERY_LEN
CAPABILITY_GAPS = _manifest.CAPABILITY_GAPS


class SageAttentionError(ValueError):
    """Raised for inputs sageattn cannot take, or in strict mode for what it would fall back on."""


_warned: set[str] = set()

# For benchmarks, not callers: keeps the fp16 path on the mma.sync kernel on Hopper (plan_call
# otherwise moves it to fp16_sm90), so that bench/mma_bench.py can time there the kernel GeForce
# and A100 cards run.
_keep_mma_fp16_on_hopper = False


def strict_mode(strict):
    """strict as given, else SAGEATTENTION_STRICT from the environment."""
    if strict is not None:
        return bool(strict)
    return os.environ.get("SAGEATTENTION_STRICT", "0") not in ("", "0", "false", "False")


def warn_once(cause, message, stacklevel):
    """warnings.warn(message) the first time `cause` comes up in the process (stacklevel: the
    user's frame, counted from the caller)."""
    if cause not in _warned:
        _warned.add(cause)
        warnings.warn(message, stacklevel=stacklevel + 1)


def accumulations_for(path):
    """The pv_accum_dtype names a path takes, its default first (sageattn::accumulation_name)."""
    return tuple(_manifest.PATH_ACCUMULATIONS[path])


def accumulation_for(caller, path, pv_accum_dtype):
    """The manifest's accumulation (ACCUMULATIONS) that pv_accum_dtype names on `path`, or the
    path's default for None; SageAttentionError naming those the path has otherwise."""
    names = _manifest.PATH_ACCUMULATIONS[path]
    if pv_accum_dtype is None:
        return next(iter(names.values()))
    if not isinstance(pv_accum_dtype, str) or pv_accum_dtype not in names:
        raise SageAttentionError(
            f"{caller}: pv_accum_dtype {pv_accum_dtype!r} is not one the {path} path has; it "
            f"has: {', '.join(repr(n) for n in names)}"
        )
    return names[pv_accum_dtype]


def accumulation_for_capability(path, major, minor):
    """The accumulation sageattn uses for `path` on compute capability major.minor: FP16 block
    sums (fp16_block) on the paths that have them where GeForce parts double that mma's rate
    (_manifest.FP16_BLOCK_CAPABILITIES), else FP32. The library's rule: sageattn.h's
    pv_accum_for."""
    has_blocks = "fp16_block" in _manifest.PATH_ACCUMULATIONS[path].values()
    if has_blocks and (major, minor) in _manifest.FP16_BLOCK_CAPABILITIES:
        return "fp16_block"
    return "fp32"


def head_dims_for(path):
    """The head dims a path's kernel takes (sageattn::path_supports_head_dim); others are
    zero-padded to the next of these."""
    return _manifest.PATH_HEAD_DIMS[path]


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
    The library's rule is sageattn.h's pv_path_for; test_api_cpu.py compares the two.
    """
    cc = major * 10 + minor
    if cc < _manifest.MIN_CAPABILITY:
        return None
    pv16_only = head_dim is not None and head_dim > FP8_PV_MAX_HEAD_DIM
    if cc == 90:
        if not _ops.HAS_SM90A:
            return "fp16"
        short = seq_q is not None and seq_q <= HOPPER_PV16_MAX_QUERY_LEN
        return "fp16_sm90" if short or pv16_only else "fp8_sm90"
    if _manifest.fp8_mma_native(major, minor) and not pv16_only:
        return "fp8"
    return "fp16"


# Why a path cannot run on a GPU of compute capability major.minor (a name of CAPABILITY_GAPS;
# "none" when it can), given whether the wheel has sm_90a code: the library's rule, generated
# from kernels/manifest.py into both (manifest.h, _manifest.py). Applied before the op is called
# so that the error is Python's and torch.compile traces no call to ask.
capability_gap = _manifest.capability_gap


_GAP_TEXT = {
    "below_sm80": "the kernels need compute capability 8.0 or newer",
    "fp8_needs_sm89": "FP8 P·V needs compute capability 8.9 or newer",
    "hopper_only": "the Hopper kernel runs on compute capability 9.0 only",
    "no_sm90a_code": "this wheel has no sm_90a code for the Hopper kernel (build it with 9.0a "
    "in its architectures)",
}


def head_slices(heads_q, heads_kv):
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


class CallFacts(NamedTuple):
    """What decides whether the kernels can run a call at all, read from its tensors and this
    process by the entry point (plan_call decides)."""

    load_error: str | None  # _ops.LOAD_ERROR where the compiled kernels did not load, else None
    device: str  # the tensors' device: "cuda:0", "cpu"
    cuda_available: bool
    dtype: str  # "torch.float16"
    sixteen_bit: bool  # float16 or bfloat16, the dtypes the kernels take
    has_mask: bool
    dropout_p: float


class Plan(NamedTuple):
    """What plan_call decided. sdpa: the call goes to torch's SDPA, because of `fallback` (why
    the kernels cannot take it: the entry point warns, or raises in strict mode) or, where that
    is None, the short-query rule; else `path` runs at `padded_head_dim` (the call's head dim, or
    the next its kernel takes: zeros added to Q, K and V leave the dot products as they are), in
    slices of the heads (head_slices) when `sliced`."""

    sdpa: bool
    path: str | None
    padded_head_dim: int
    sliced: bool
    accumulation: str = "fp32"  # how P·V is summed: a manifest ACCUMULATIONS name
    fallback: str | None = None


def fallback_reason(facts, major, minor, head_dim):
    """Why the kernels cannot run a call (SDPA then runs it), or None. major, minor: the device's
    compute capability (None off CUDA)."""
    # First: a library that does not load (a torch older than the wheel needs, a broken install)
    # is what the user must hear about, whatever the tensors.
    if facts.load_error is not None:
        return f"the compiled kernels could not be loaded ({facts.load_error})"
    if not facts.device.startswith("cuda"):
        if not facts.cuda_available:
            return "the tensors are on the CPU (torch.cuda.is_available() is False)"
        return f"the tensors are on {facts.device}, not a CUDA device"
    if not facts.sixteen_bit:
        return f"dtype {facts.dtype} (the kernels take float16 and bfloat16)"
    if head_dim > max(SUPPORTED_HEAD_DIMS):
        return (
            f"head_dim {head_dim} (supported: {', '.join(map(str, SUPPORTED_HEAD_DIMS))}; "
            "others up to the largest are zero-padded to the next the kernel takes)"
        )
    if facts.has_mask:
        return "an attn_mask (the kernels support causal masking only)"
    if facts.dropout_p:
        return "dropout"
    if path_for_capability(major, minor) is None:
        return f"compute capability {major}.{minor} (sageattn needs 8.0 or newer)"
    return None


def plan_call(
    caller,
    major,
    minor,
    *,
    seq_q,
    seq_k,
    heads_q,
    heads_kv,
    head_dim,
    is_causal,
    return_lse,
    path=None,
    pv_accum_dtype=None,
    short_queries=False,
    strict=None,
    instead="",
    user_frames=1,
    facts=None,
):
    """The plan of one call on a GPU of compute capability major.minor.

    caller: the entry point's name, for messages. seq_q: the (longest) query length, which picks
    Hopper's P·V type. path: the kernel path asked for (a per-path function's, or varlen's
    pv_path), or None for sageattn's choice (path_for_capability). pv_accum_dtype: one of that
    path's accumulations by name (accumulations_for), None for its default; where the call then
    runs on another path (16-bit P·V for a head dim FP8 does not take, Hopper's kernel for the
    fp16 path) the same accumulation if that path has it, else its default. short_queries:
    whether the short-query rule applies (sageattn's sdpa_for_short_queries: None for the
    environment's choice); False runs the kernel whatever the sizes. instead: what the capability
    error suggests. user_frames: how many frames above this call the user's code is (for warnings).
    facts: what the call's tensors are (CallFacts); a call the kernels cannot take goes to SDPA
    with its fallback reason, before any other rule (None: the caller knows they can).
    Raises SageAttentionError where the path cannot run on this GPU; warns once (raises
    in strict mode) where FP8 P·V cannot take the head dim and 16-bit P·V runs instead.
    """
    if facts is not None:
        reason = fallback_reason(facts, major, minor, head_dim)
        if reason is not None:
            return Plan(True, None, head_dim, False, fallback=reason)
    if short_queries is not False and uses_sdpa_for_short_queries(
        seq_q, seq_k, is_causal, return_lse, heads_q != heads_kv, short_queries
    ):
        return Plan(True, None, head_dim, False)
    if path is None:
        path = path_for_capability(major, minor, seq_q, head_dim) or "fp16"
        accumulation = accumulation_for_capability(path, major, minor)
    else:
        accumulation = accumulation_for(caller, path, pv_accum_dtype)
    if (
        path == "fp16"
        and major * 10 + minor == 90
        and _ops.HAS_SM90A
        and not _keep_mma_fp16_on_hopper
    ):
        path = "fp16_sm90"  # the same algorithm on the Hopper kernel, faster (docs/kernels.md)
    gap = capability_gap(path, major, minor, _ops.HAS_SM90A)
    if gap != "none":
        raise SageAttentionError(
            f"{caller}: the {path} path cannot run on compute capability {major}.{minor}: "
            f"{_GAP_TEXT[gap]}{'; ' + instead if instead else ''}"
        )
    asked = path
    path = _pv16_for_head_dim(caller, path, head_dim, strict, user_frames)
    if accumulation not in _manifest.PATH_ACCUMULATIONS[path].values():
        accumulation = accumulation_for(caller, path, None)
    padded = next(d for d in head_dims_for(path) if d >= head_dim)
    dims = _manifest.PATH_ACCUMULATION_HEAD_DIMS[path][accumulation]
    if padded not in dims:
        if pv_accum_dtype is not None and path == asked:
            raise SageAttentionError(
                f"{caller}: the {path} path sums P·V as {pv_accum_dtype!r} at head dims "
                f"{', '.join(map(str, dims))}, not {padded}; "
                f"{accumulations_for(path)[0]!r} takes every one"
            )
        accumulation = accumulation_for(caller, path, None)
    return Plan(False, path, padded, heads_q > MAX_QUERY_HEADS, accumulation)


def _pv16_for_head_dim(caller, path, head_dim, strict, user_frames):
    """The path a call asked for, or where FP8 P·V does not take its head dim (above
    FP8_PV_MAX_HEAD_DIM) the 16-bit P·V path of the same kernel family, with one warning (strict
    mode raises instead)."""
    if path not in ("fp8", "fp8_sm90") or head_dim <= FP8_PV_MAX_HEAD_DIM:
        return path
    instead = "fp16_sm90" if path == "fp8_sm90" else "fp16"
    if strict_mode(strict):
        raise SageAttentionError(
            f"{caller}: FP8 P·V ({path}) takes head dims up to {FP8_PV_MAX_HEAD_DIM}, not "
            f"{head_dim}; the {instead} path (16-bit P·V) takes up to "
            f"{max(SUPPORTED_HEAD_DIMS)}: call sageattn or set SAGEATTENTION_STRICT=0"
        )
    warn_once(
        f"head_dim {head_dim} on {path}",
        f"{caller}: FP8 P·V ({path}) takes head dims up to {FP8_PV_MAX_HEAD_DIM}; head_dim "
        f"{head_dim} runs with 16-bit P·V ({instead}), which is more accurate",
        stacklevel=2 + user_frames,  # above this function and plan_call
    )
    return instead
