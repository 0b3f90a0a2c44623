"""The facts the Python side repeats from the kernel library's header (kernels/include/sageattn/
sageattn.h) must not drift from it: the operator's path, granularity and dtype numbers, the
supported head dims and query heads, the Hopper length rule, the capability rule behind the
errors, and the C API's struct that kernels/tests/sageattn_ctypes.py mirrors field by field.
Read from the sources of this checkout; the rules are compared through the installed wheel's
operator, so a rebuilt library and an edited core.py are caught alike."""

import ctypes
import re
import sys
from pathlib import Path

import pytest
import torch

from sageattention import core

ROOT = Path(__file__).resolve().parents[2]
HEADER = (ROOT / "kernels/include/sageattn/sageattn.h").read_text()
BINDING_PARAMS = (ROOT / "python/csrc/attention_params.h").read_text()
CAPI = (ROOT / "kernels/capi/sageattn_capi.cpp").read_text()
sys.path.insert(0, str(ROOT / "kernels/tests"))
import sageattn_ctypes  # noqa: E402  (imports torch and ctypes only; loads no library)


def enum(name, text=HEADER):
    """{enumerator: number} of `enum class name { a, b, ... };` (implicit numbering only)."""
    found = re.search(r"enum class " + name + r"\s*\{([^}]*)\};", text)
    assert found, f"enum class {name} not found"
    names = [n.strip() for n in found.group(1).split(",") if n.strip()]
    assert all(re.fullmatch(r"\w+", n) for n in names), (
        f"{name}: explicit values are not parsed: {names}"
    )
    return {n: i for i, n in enumerate(names)}


def constant(name, text=HEADER):
    found = re.search(r"inline constexpr [\w:]+ " + name + r"(\[\])? = ([^;]+);", text)
    assert found, f"{name} not found"
    value = found.group(2).strip()
    return tuple(int(v) for v in value.strip("{}").split(",")) if found.group(1) else int(value)


def test_path_numbers():
    assert core._PATHS == enum("PvPath")
    assert sageattn_ctypes.PATHS == enum("PvPath")


def test_granularity_numbers():
    assert core._GRANULARITY == enum("Granularity")
    assert sageattn_ctypes.GRANULARITY == enum("Granularity")
    # The binding and the C API turn 0 into per_block and anything else into per_warp.
    assert constant("kPerBlock", BINDING_PARAMS) == enum("Granularity")["per_block"] == 0
    assert "c.q_granularity == 0 ? sageattn::Granularity::per_block" in CAPI


def test_layout_numbers():
    assert constant("kLayoutHnd", BINDING_PARAMS) == core._LAYOUTS["HND"]
    assert sorted(core._LAYOUTS.values()) == [0, 1]


def test_dtype_numbers():
    # sageattn_ctypes writes 0 for float16; the C API reads 0 as DType::f16.
    assert enum("DType") == {"f16": 0, "bf16": 1}
    assert "c.dtype == 0 ? sageattn::DType::f16 : sageattn::DType::bf16" in CAPI
    assert (
        "p.dtype = 0 if q.dtype == torch.float16 else 1"
        in (ROOT / "kernels/tests/sageattn_ctypes.py").read_text()
    )


def test_head_dims_query_heads_and_the_hopper_length_rule():
    assert core.SUPPORTED_HEAD_DIMS == constant("kSupportedHeadDims")
    assert core.FP8_PV_MAX_HEAD_DIM == constant("kFp8PvMaxHeadDim")
    assert core.HOPPER_ONLY_HEAD_DIMS == constant("kHopperOnlyHeadDims")
    assert core.MAX_QUERY_HEADS == constant("kMaxQueryHeads")
    assert core.HOPPER_PV16_MAX_QUERY_LEN == constant("kHopperPv16MaxQueryLen")


def test_sharp_threshold_default():
    found = re.search(r"inline constexpr float kDefaultSharpThreshold = ([\d.]+)f;", HEADER)
    assert found, "kDefaultSharpThreshold not found"
    assert core.SHARP_THRESHOLD == sageattn_ctypes.SHARP_THRESHOLD == float(found.group(1))


def test_capability_gap_names():
    assert core.CAPABILITY_GAPS == tuple(enum("CapabilityGap"))


@pytest.mark.parametrize("has_sm90a", [False, True])
def test_capability_rule_matches_the_library(has_sm90a):
    # The library's constexpr rule, evaluated by the installed wheel's operator, against
    # core.capability_gap, for every path on every kind of GPU.
    op = torch.ops.sageattention.capability_gap
    for path, number in core._PATHS.items():
        for major, minor in [
            (7, 0),
            (7, 5),
            (8, 0),
            (8, 6),
            (8, 7),
            (8, 9),
            (9, 0),
            (10, 0),
            (10, 3),
            (11, 0),
            (12, 0),
            (12, 1),
        ]:
            library = core.CAPABILITY_GAPS[op(number, major, minor, has_sm90a)]
            assert core.capability_gap(path, major, minor, has_sm90a) == library, (
                path,
                major,
                minor,
            )
    assert op(len(core._PATHS), 9, 0, True) == -1  # a number that is no path


C_TYPES = {
    "int": ctypes.c_int,
    "float": ctypes.c_float,
    "const void*": ctypes.c_void_p,
    "void*": ctypes.c_void_p,
    "float*": ctypes.c_void_p,
    "long long": ctypes.c_longlong,
    "const int*": ctypes.c_void_p,
}


def capi_struct_fields():
    """(name, ctypes type) of struct SageCapiParams, declaration by declaration."""
    body = re.search(r"struct SageCapiParams \{([^}]*)\};", CAPI).group(1)
    fields = []
    for declaration in body.split(";"):
        declaration = declaration.strip()
        if not declaration:
            continue
        kind, names = re.fullmatch(
            r"((?:const )?(?:long long|\w+)\*?)\s+(.+)", declaration
        ).groups()
        for name in names.split(","):
            name, count = re.fullmatch(r"\s*(\w+)(?:\[(\d+)\])?\s*", name).groups()
            fields.append((name, C_TYPES[kind] * int(count) if count else C_TYPES[kind]))
    return fields


def test_the_ctypes_mirror_of_the_c_api_struct():
    mirror = sageattn_ctypes.Params._fields_
    struct = capi_struct_fields()
    assert [name for name, _ in mirror] == [name for name, _ in struct]
    for (name, mine), (_, theirs) in zip(mirror, struct):
        assert ctypes.sizeof(mine) == ctypes.sizeof(theirs) and ctypes.alignment(
            mine
        ) == ctypes.alignment(theirs), name
