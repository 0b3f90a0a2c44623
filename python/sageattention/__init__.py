"""SageAttention: quantized attention (INT8 Q·Kᵀ, FP8 or 16-bit P·V) for PyTorch on NVIDIA GPUs."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from .core import (
    SUPPORTED_HEAD_DIMS,
    SageAttentionError,
    path_for_capability,
    sageattn,
    sageattn_qk_int8_pv_fp8_cuda,
    sageattn_qk_int8_pv_fp8_cuda_sm90,
    sageattn_qk_int8_pv_fp16_cuda,
)
from .varlen import sageattn_varlen

try:
    __version__ = _version("sageattention")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "sageattn",
    "sageattn_varlen",
    "sageattn_qk_int8_pv_fp16_cuda",
    "sageattn_qk_int8_pv_fp8_cuda",
    "sageattn_qk_int8_pv_fp8_cuda_sm90",
    "SageAttentionError",
    "path_for_capability",
    "SUPPORTED_HEAD_DIMS",
]
