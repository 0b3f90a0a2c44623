"""The one-line reason a wheel's kernels do not load (sageattention/_diagnose.py), for every kind
of mismatch a user meets: a glibc, a torch or CUDA build, a driver other than the wheel's."""

import pytest

from sageattention import _diagnose
from sageattention._diagnose import Facts, explain

UNIVERSAL_13 = {"torch": "2.10.0", "cuda": "13.0.1", "abi": "stable"}
PER_TORCH_12 = {"torch": "2.6.0", "cuda": "12.4.1", "abi": "per-torch"}


def facts(**changes):
    base = Facts(
        error="/site/sageattention/_kernels.so: cannot load",
        built=UNIVERSAL_13,
        torch_version="2.11.0+cu130",
        torch_cuda="13.0",
        torch_hip=None,
        driver_cuda=(13, 0),
        glibc="2.36",
    )
    return base._replace(**changes)


@pytest.mark.parametrize(
    "changes, expected",
    [
        (
            dict(
                error="/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found",
                built=PER_TORCH_12,
            ),
            "the kernels need glibc 2.38 or newer (this system has 2.36): install a wheel built "
            "for an older glibc",
        ),
        (dict(torch_version="2.11.0+rocm6.4", torch_cuda=None, torch_hip="6.4"), "ROCm build"),
        (
            dict(torch_version="2.11.0+cpu", torch_cuda=None),
            "this torch is a CPU build (2.11.0+cpu); install torch built for CUDA 13",
        ),
        (
            dict(
                error="libcudart.so.13: cannot open shared object file",
                torch_version="2.11.0+cu128",
                torch_cuda="12.8",
            ),
            "the kernels were built with CUDA 13 (libcudart.so.13) and this torch (2.11.0+cu128) "
            "with CUDA 12.8: install the sageattention wheel built for CUDA 12, from the index for "
            "your torch's suffix (<site>/cu128/simple)",
        ),
        (
            dict(
                error="undefined symbol: _ZN3c104impl3cow11cow_deleterEPv",
                built=PER_TORCH_12,
                torch_cuda="12.4",
            ),
            "the kernels were built for torch 2.6 and this is torch 2.11.0+cu130: install the "
            "wheel for torch 2.11",
        ),
        (
            dict(error="undefined symbol: _ZN3c10foo", built={"cuda": "13.0.1", "abi": "stable"}),
            "lacks (_ZN3c10foo)",
        ),
        (
            dict(driver_cuda=(12, 8)),
            "the NVIDIA driver supports CUDA 12.8 and the kernels need CUDA 13: update the driver "
            "(R580 or newer), or install the wheel built for CUDA 12 (<site>/cu12/simple)",
        ),
    ],
)
def test_each_mismatch_is_named_with_its_fix(changes, expected):
    reason = explain(facts(**changes))
    assert reason is not None and expected in reason, reason


def test_no_reason_where_the_facts_agree():
    # Nothing the facts show explains it: LOAD_ERROR stays the loader's message alone.
    assert explain(facts()) is None
    assert explain(facts(built=None)) is None


def test_the_facts_of_this_process_never_raise():
    f = _diagnose.facts("some error")
    assert f.torch_version and f.error == "some error"
    assert f.driver_cuda is None or (isinstance(f.driver_cuda, tuple) and len(f.driver_cuda) == 2)
