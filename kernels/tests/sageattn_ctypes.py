"""ctypes access to libsageattn_capi.so for the GPU test and benchmark scripts: runs the kernel
library on torch tensors (their data pointers and strides), and the host float64 references."""
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import manifest  # noqa: E402  (kernels/manifest.py: the library's numbers)

PATHS = {p.name: i for i, p in enumerate(manifest.PATHS)}
ACCUMULATIONS = {a.name: i for i, a in enumerate(manifest.ACCUMULATIONS)}
GRANULARITY = {g: i for i, g in enumerate(manifest.GRANULARITIES)}


class Params(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("batch", ctypes.c_int), ("heads_q", ctypes.c_int),
                ("heads_kv", ctypes.c_int), ("qo_len", ctypes.c_int), ("kv_len", ctypes.c_int),
                ("head_dim", ctypes.c_int),
                ("q", ctypes.c_void_p), ("q_strides", ctypes.c_longlong * 3),
                ("k", ctypes.c_void_p), ("k_strides", ctypes.c_longlong * 3),
                ("v", ctypes.c_void_p), ("v_strides", ctypes.c_longlong * 3),
                ("o", ctypes.c_void_p), ("o_strides", ctypes.c_longlong * 3),
                ("lse", ctypes.c_void_p), ("causal", ctypes.c_int), ("sm_scale", ctypes.c_float),
                ("pv_path", ctypes.c_int), ("q_granularity", ctypes.c_int),
                ("k_granularity", ctypes.c_int), ("smooth_k", ctypes.c_int),
                ("cu_seqlens_q", ctypes.c_void_p), ("cu_seqlens_k", ctypes.c_void_p),
                ("total_q", ctypes.c_int), ("total_k", ctypes.c_int),
                ("sharp_threshold", ctypes.c_float), ("pv_accum", ctypes.c_int)]

SHARP_THRESHOLD = manifest.SHARP_THRESHOLD


def load(path=None):
    path = path or os.environ.get("SAGEATTN_CAPI", "build/kernels/kernels/libsageattn_capi.so")
    lib = ctypes.CDLL(path)
    lib.sageattn_capi_workspace_bytes.restype = ctypes.c_size_t
    lib.sageattn_capi_workspace_bytes.argtypes = [ctypes.POINTER(Params)]
    lib.sageattn_capi_run.restype = ctypes.c_int
    lib.sageattn_capi_run.argtypes = [ctypes.POINTER(Params), ctypes.c_int, ctypes.c_void_p,
                                      ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.sageattn_capi_reference.argtypes = [ctypes.POINTER(Params), ctypes.c_int] + [ctypes.c_void_p] * 5
    lib.sageattn_capi_architectures.restype = ctypes.c_char_p
    return lib


def variant(name):
    """(path, accumulation) of a kernel variant's name: a path ("fp8", its default accumulation)
    or a path and one of its pv_accum_dtype names ("fp8:fp32+fp16")."""
    path, _, accum = name.partition(":")
    accumulations = {a[1]: a[0] for a in next(p for p in manifest.PATHS if p.name == path).accumulations}
    return path, accumulations[accum] if accum else "fp32"


def variants_of(path):
    """A path's variants: the path (its default accumulation), then path:name for the others."""
    p = next(p for p in manifest.PATHS if p.name == path)
    return [path] + [f"{path}:{a[1]}" for a in p.accumulations[1:]]


def available_paths(lib):
    """The kernel variants this library can run on the current GPU: fp16 from sm80, fp8 (each
    accumulation) from sm89, fp8_sm90 and fp16_sm90 on compute capability 9.0 with a library built
    for sm_90a."""
    major, minor = torch.cuda.get_device_capability()
    cc = major * 10 + minor
    paths = ["fp16"] + (["fp8"] if cc >= 89 else [])
    if cc == 90 and "90a" in lib.sageattn_capi_architectures().decode().split():
        paths += ["fp8_sm90", "fp16_sm90"]
    return [v for p in paths for v in variants_of(p)]


def _strides(t, layout):
    """(batch, head, seq) strides of a [B,H,S,D] (HND) or [B,S,H,D] (NHD) tensor."""
    s = t.stride()
    return (s[0], s[1], s[2]) if layout == "HND" else (s[0], s[2], s[1])


class Call:
    """One configured call; q/k/v/o are torch tensors in `layout`; path: a variant's name. A varlen call (varlen=(cu_q,
    cu_k, max_q, max_k), int32 CUDA offsets and the longest lengths) takes [total, heads, d]
    tensors, and its lse is [heads_q, total_q]. sharp_threshold: the sharp-tile guard's
    (sageattn.h), None for none."""

    def __init__(self, lib, q, k, v, o, layout, causal=False, path="fp8", lse=None,
                 q_gran="per_warp", k_gran="per_block", smooth_k=True, sm_scale=0.0, varlen=None,
                 sharp_threshold=SHARP_THRESHOLD):
        self.lib = lib
        p = Params()
        p.dtype = 0 if q.dtype == torch.float16 else 1
        if varlen is None:
            b = q.shape[0]
            hq, lq = (q.shape[1], q.shape[2]) if layout == "HND" else (q.shape[2], q.shape[1])
            hk, lk = (k.shape[1], k.shape[2]) if layout == "HND" else (k.shape[2], k.shape[1])
            strides = {name: _strides(t, layout) for name, t in (("q", q), ("k", k), ("v", v), ("o", o))}
        else:
            cu_q, cu_k, lq, lk = varlen
            b, hq, hk = cu_q.numel() - 1, q.shape[1], k.shape[1]
            strides = {name: (0, t.stride(1), t.stride(0)) for name, t in (("q", q), ("k", k), ("v", v), ("o", o))}
            p.cu_seqlens_q, p.cu_seqlens_k = cu_q.data_ptr(), cu_k.data_ptr()
            p.total_q, p.total_k = q.shape[0], k.shape[0]
        p.batch, p.heads_q, p.heads_kv, p.qo_len, p.kv_len, p.head_dim = b, hq, hk, lq, lk, q.shape[-1]
        for name, t in (("q", q), ("k", k), ("v", v), ("o", o)):
            setattr(p, name, t.data_ptr())
            getattr(p, name + "_strides")[:] = strides[name]
        p.lse = lse.data_ptr() if lse is not None else None
        path, accumulation = variant(path)
        p.causal, p.sm_scale, p.pv_path = int(causal), sm_scale, PATHS[path]
        p.pv_accum = ACCUMULATIONS[accumulation]
        p.q_granularity, p.k_granularity = GRANULARITY[q_gran], GRANULARITY[k_gran]
        p.smooth_k = int(smooth_k)
        p.sharp_threshold = sharp_threshold or 0.0  # None: no guard
        self.params = p
        self.keep = (q, k, v, o, lse, varlen)
        n = lib.sageattn_capi_workspace_bytes(ctypes.byref(p))
        self.workspace = torch.empty(max(n, 1), dtype=torch.uint8, device=q.device)

    def run(self, which=0):
        err = ctypes.create_string_buffer(512)
        rc = self.lib.sageattn_capi_run(ctypes.byref(self.params), which, self.workspace.data_ptr(),
                                        self.workspace.numel(),
                                        torch.cuda.current_stream().cuda_stream, err, 512)
        if rc != 0:
            raise RuntimeError(err.value.decode())


def host_reference(lib, call, quantized, q, k, v):
    """float64 reference on the host for a Call, inputs as contiguous HND float64 CPU tensors."""
    p = call.params
    out = torch.empty((p.batch, p.heads_q, p.qo_len, p.head_dim), dtype=torch.float64)
    lse = torch.empty((p.batch, p.heads_q, p.qo_len), dtype=torch.float64)
    lib.sageattn_capi_reference(ctypes.byref(p), int(quantized), q.data_ptr(), k.data_ptr(),
                                v.data_ptr(), out.data_ptr(), lse.data_ptr())
    return out, lse
