"""Loads the compiled operator library and registers its fake implementation.

Importing this never fails for want of a GPU: the library links the CUDA runtime that torch
brings, and it is only called when a CUDA tensor arrives. `LOAD_ERROR` says why it could not be
loaded: the cause and the fix first where _diagnose.py can tell them (a torch or CUDA build, a
glibc or a driver other than the wheel's), then the loader's message."""

import os
import sys

import torch


def _find_library():
    """_kernels.so beside this file (a wheel install), else in a sageattention directory on
    sys.path: an editable install serves the .py files from the source tree and installs the
    compiled library into site-packages."""
    here = os.path.dirname(os.path.abspath(__file__))
    for directory in [here] + [os.path.join(p, "sageattention") for p in sys.path if p]:
        candidate = os.path.join(directory, "_kernels.so")
        if os.path.isfile(candidate):
            return candidate
    return os.path.join(here, "_kernels.so")


LIBRARY = _find_library()
LOAD_ERROR = None

try:
    torch.ops.load_library(LIBRARY)
except (OSError, RuntimeError) as e:  # pragma: no cover - depends on the installation
    LOAD_ERROR = f"{LIBRARY}: {e}"
    try:  # the cause and the fix first, where the wheel's record and this machine say it
        from . import _diagnose

        reason = _diagnose.explain(_diagnose.facts(str(e)))
    except Exception:  # noqa: BLE001 - a diagnosis must never stop the import
        reason = None
    if reason:
        LOAD_ERROR = f"{reason} ({LOAD_ERROR})"


def available():
    return LOAD_ERROR is None


# Whether the kernels include the Hopper wgmma kernel (sm_90a code). Read once here: a call of
# the op inside sageattn would break torch.compile(fullgraph=True) graphs.
HAS_SM90A = False
if LOAD_ERROR is None:
    try:
        HAS_SM90A = bool(torch.ops.sageattention.has_sm90a())
    except (AttributeError, RuntimeError):  # pragma: no cover - a library without the op
        HAS_SM90A = False


if LOAD_ERROR is None:

    @torch.library.register_fake("sageattention::attention")
    def _attention_fake(
        q,
        k,
        v,
        layout,
        causal,
        sm_scale,
        pv_path,
        pv_accum,
        q_granularity,
        k_granularity,
        smooth_k,
        sharp_threshold,
        return_lse,
    ):
        # Same shapes, strides and dtypes as the CUDA implementation: torch.compile traces this.
        hnd = layout == 0
        heads_q, qo_len = (q.shape[1], q.shape[2]) if hnd else (q.shape[2], q.shape[1])
        o = torch.empty_like(q)
        lse = q.new_empty(
            (q.shape[0], heads_q, qo_len) if return_lse else (0,), dtype=torch.float32
        )
        return o, lse

    @torch.library.register_fake("sageattention::attention_varlen")
    def _attention_varlen_fake(
        q,
        k,
        v,
        cu_seqlens_q,
        cu_seqlens_k,
        max_seqlen_q,
        max_seqlen_k,
        causal,
        sm_scale,
        pv_path,
        pv_accum,
        q_granularity,
        k_granularity,
        smooth_k,
        sharp_threshold,
        return_lse,
    ):
        # q [total_q, heads_q, head_dim]; the LSE [heads_q, total_q], as the CUDA implementation.
        o = torch.empty_like(q)
        lse = q.new_empty((q.shape[1], q.shape[0]) if return_lse else (0,), dtype=torch.float32)
        return o, lse
