"""Why the compiled kernels do not load here, said in one line with what would fit: from the
wheel's record of what it was built for (its dist-info's sagebuild.json), torch's build, the
NVIDIA driver and the loader's own message. _ops.LOAD_ERROR starts with it, and so do
sageattn's fallback warning and verify-wheel's import check (I001), which print LOAD_ERROR."""

from __future__ import annotations

import ctypes
import json
import platform
import re
from typing import NamedTuple

# The oldest driver of each CUDA major's runtime (NVIDIA's CUDA toolkit release notes: CUDA
# minor version compatibility within a major, from these drivers on).
_DRIVER_FOR_CUDA = {12: "R525", 13: "R580"}


class Facts(NamedTuple):
    """What explain() compares; None where it is not known."""

    error: str  # the loader's message
    built: dict | None  # sagebuild.json: torch, cuda, abi ("per-torch", "stable", ...)
    torch_version: str
    torch_cuda: str | None  # torch.version.cuda: "12.8"; None for CPU and ROCm builds
    torch_hip: str | None  # torch.version.hip
    driver_cuda: tuple[int, int] | None  # the CUDA version the driver supports
    glibc: str | None  # "2.36"


def _major(version):
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return None


def _minor_version(version):
    return ".".join(str(version).split("+")[0].split(".")[:2])


def _index_for(torch_version: str, torch_cuda: str) -> str:
    """Where the wheel that fits this torch is: our index named by the suffix of the torch's
    own (PyTorch's convention: 2.11.0+cu128 came from .../cu128), or by its CUDA major."""
    suffix = torch_version.partition("+")[2]
    if suffix.startswith("cu"):
        return f"from the index for your torch's suffix (<site>/{suffix}/simple)"
    return f"from the index for CUDA {_major(torch_cuda)} (<site>/cu{_major(torch_cuda)}/simple)"


def explain(f: Facts) -> str | None:
    """The cause and the fix in one sentence, or None where the facts do not say."""
    built = f.built or {}
    glibc = re.search(r"GLIBC_(\d+\.\d+)'? not found", f.error)
    if glibc:
        have = f" (this system has {f.glibc})" if f.glibc else ""
        return (
            f"the kernels need glibc {glibc.group(1)} or newer{have}: install a wheel built for "
            "an older glibc (its platform tag manylinux_2_28 or lower), or use a newer system"
        )
    if f.torch_hip:
        return f"this torch is a ROCm build ({f.torch_version}); the kernels run on CUDA GPUs only"
    wheel_cuda = _major(built.get("cuda")) if built.get("cuda") else None
    if f.torch_cuda is None:
        return f"this torch is a CPU build ({f.torch_version}); install torch built for CUDA" + (
            f" {wheel_cuda} (a +cu{wheel_cuda}x build)" if wheel_cuda else ""
        )
    torch_cuda = _major(f.torch_cuda)
    runtime = re.search(r"(libcudart\.so\.(\d+))", f.error)
    if runtime:
        needed = int(runtime.group(2))
        if torch_cuda and torch_cuda != needed:
            return (
                f"the kernels were built with CUDA {needed} ({runtime.group(1)}) and this torch "
                f"({f.torch_version}) with CUDA {f.torch_cuda}: install the sageattention wheel "
                f"built for CUDA {torch_cuda}, {_index_for(f.torch_version, f.torch_cuda)}"
            )
        return (
            f"the kernels need the CUDA {needed} runtime ({runtime.group(1)}), which this torch "
            f"({f.torch_version}) does not bring: install the wheel built for its CUDA"
        )
    other_torch = (
        built.get("abi") in ("per-torch", "per-torch-py3")
        and built.get("torch")
        and _minor_version(built["torch"]) != _minor_version(f.torch_version)
    )
    if other_torch:
        return (
            f"the kernels were built for torch {_minor_version(built['torch'])} and this is torch "
            f"{f.torch_version}: install the wheel for torch {_minor_version(f.torch_version)}, or "
            "the universal one (any torch from 2.10)"
        )
    symbol = re.search(r"undefined symbol: (\S+)", f.error)
    if symbol:
        return (
            f"the kernels need a symbol this torch ({f.torch_version}) lacks ({symbol.group(1)}): "
            "they were built for another torch; install the wheel for this one"
        )
    if wheel_cuda and f.driver_cuda and f.driver_cuda[0] < wheel_cuda:
        return (
            f"the NVIDIA driver supports CUDA {f.driver_cuda[0]}.{f.driver_cuda[1]} and the "
            f"kernels need CUDA {wheel_cuda}: update the driver "
            f"({_DRIVER_FOR_CUDA.get(wheel_cuda, 'a newer one')} or newer), or install the wheel "
            f"built for CUDA {f.driver_cuda[0]} (<site>/cu{f.driver_cuda[0]}/simple)"
        )
    if wheel_cuda and torch_cuda and wheel_cuda != torch_cuda:
        return (
            f"the kernels were built with CUDA {built['cuda']} and this torch ({f.torch_version}) "
            f"with CUDA {f.torch_cuda}: install the sageattention wheel built for CUDA "
            f"{torch_cuda}, {_index_for(f.torch_version, f.torch_cuda)}"
        )
    return None


def wheel_build() -> dict | None:
    """sagebuild.json of the installed sageattention distribution, or None."""
    try:
        from importlib.metadata import distribution

        text = distribution("sageattention").read_text("sagebuild.json")
        return json.loads(text) if text else None
    except Exception:  # noqa: BLE001 - an editable or foreign install: nothing recorded
        return None


def driver_cuda_version() -> tuple[int, int] | None:
    """The CUDA version the NVIDIA driver supports (cuDriverGetVersion), or None without one."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int(0)
        if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0 or version.value <= 0:
            return None
        return version.value // 1000, version.value % 1000 // 10
    except (OSError, AttributeError):
        return None


def facts(error: str) -> Facts:
    """The facts of this process, for a load that failed with `error`."""
    import torch

    libc, version = platform.libc_ver()
    return Facts(
        error=error,
        built=wheel_build(),
        torch_version=torch.__version__,
        torch_cuda=getattr(torch.version, "cuda", None),
        torch_hip=getattr(torch.version, "hip", None),
        driver_cuda=driver_cuda_version(),
        glibc=version if libc == "glibc" else None,
    )
