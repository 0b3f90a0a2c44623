"""The facts the Python package shares with the kernel library come from one place,
kernels/manifest.py, generated into both (kernels/include/sageattn/manifest.h and
python/sageattention/_manifest.py): the generated files must be current, the installed package
must carry the manifest's numbers, and the rules both sides apply over them (the capability rule)
must agree through the installed wheel's operator. Also the C API's struct, which
kernels/tests/sageattn_ctypes.py mirrors field by field."""

import ctypes
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from sageattention import core

ROOT = Path(__file__).resolve().parents[2]
CAPI = (ROOT / "kernels/capi/sageattn_capi.cpp").read_text()
sys.path.insert(0, str(ROOT / "kernels/tests"))
import sageattn_ctypes  # noqa: E402  (imports torch, ctypes and kernels/manifest.py; loads no library)

manifest = sageattn_ctypes.manifest


def numbered(names):
    return {name: i for i, name in enumerate(names)}


def test_the_generated_files_are_what_the_manifest_gives():
    run = subprocess.run(
        [sys.executable, str(ROOT / "kernels/generate_instantiations.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_installed_package_has_the_manifests_numbers():
    assert core._PATHS == numbered(p.name for p in manifest.PATHS) == sageattn_ctypes.PATHS
    assert core._GRANULARITY == numbered(manifest.GRANULARITIES) == sageattn_ctypes.GRANULARITY
    assert core._LAYOUTS == numbered(manifest.LAYOUTS)
    assert core.CAPABILITY_GAPS == manifest.CAPABILITY_GAPS
    assert core.SUPPORTED_HEAD_DIMS == manifest.SUPPORTED_HEAD_DIMS
    assert core.FP8_PV_MAX_HEAD_DIM == manifest.FP8_PV_MAX_HEAD_DIM
    assert core.HOPPER_ONLY_HEAD_DIMS == manifest.HOPPER_ONLY_HEAD_DIMS
    assert core.MAX_QUERY_HEADS == manifest.MAX_QUERY_HEADS
    assert core.HOPPER_PV16_MAX_QUERY_LEN == manifest.HOPPER_PV16_MAX_QUERY_LEN
    assert core.SHARP_THRESHOLD == sageattn_ctypes.SHARP_THRESHOLD == manifest.SHARP_THRESHOLD
    for p in manifest.PATHS:
        assert core.head_dims_for(p.name) == p.head_dims
    assert (
        core._ACCUMULATIONS
        == numbered(a.name for a in manifest.ACCUMULATIONS)
        == sageattn_ctypes.ACCUMULATIONS
    )
    for p in manifest.PATHS:
        assert core._plan.accumulations_for(p.name) == tuple(a[1] for a in p.accumulations)
        for a in p.accumulations:
            dims = core._plan._manifest.PATH_ACCUMULATION_HEAD_DIMS[p.name][a[0]]
            assert dims == p.accumulation_head_dims(a[0])
            assert set(dims) <= set(p.head_dims)
        assert sageattn_ctypes.variants_of(p.name)[0] == p.name
        for variant in sageattn_ctypes.variants_of(p.name):
            assert sageattn_ctypes.variant(variant)[0] == p.name


def test_the_c_api_reads_the_numbers_as_the_library_numbers_them():
    # The C API turns 0 into f16 and per_block, anything else into bf16 and per_warp;
    # sageattn_ctypes writes 0 for float16.
    assert manifest.DTYPES[0] == "f16" and manifest.GRANULARITIES[0] == "per_block"
    assert "c.dtype == 0 ? sageattn::DType::f16 : sageattn::DType::bf16" in CAPI
    assert "c.q_granularity == 0 ? sageattn::Granularity::per_block" in CAPI
    assert (
        "p.dtype = 0 if q.dtype == torch.float16 else 1"
        in (ROOT / "kernels/tests/sageattn_ctypes.py").read_text()
    )


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
