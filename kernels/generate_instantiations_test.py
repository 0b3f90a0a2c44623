#!/usr/bin/env python3
"""A head dim is the manifest's rows: added to a copy of kernels/manifest.py, the generator
writes its translation units, dispatch cases, table rows and Python numbers, and changes no other
file; taken away, they go; a path's head dim without its rows is refused, naming the row. (The
kernel source a new shape needs is not the generator's: the sources it writes name the kernels.)
Runs the generator on manifests in memory; writes nothing."""
import importlib.util
import os
import sys

KERNELS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, KERNELS)
import generate_instantiations as gen  # noqa: E402

with open(os.path.join(KERNELS, "manifest.py")) as f:
    MANIFEST = f.read()
COMMITTED = gen.generated_files()


def manifest_with(*edits):
    """The manifest module with each (old, new) text replaced once (the old text must be there:
    a test that silently edits nothing proves nothing)."""
    text = MANIFEST
    for old, new in edits:
        assert text.count(old) == 1, f"the manifest no longer has {old!r} once"
        text = text.replace(old, new)
    spec = importlib.util.spec_from_loader("manifest_edited", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(text, "manifest.py (edited)", "exec"), module.__dict__)
    return module


def generate(module):
    """(files, problems) the generator gives for a manifest module."""
    saved = gen.manifest
    gen.manifest = module
    try:
        problems = module.missing_rows()
        return ({} if problems else gen.generated_files()), problems
    finally:
        gen.manifest = saved


def changed(files):
    """The generated files that differ from the committed manifest's, and those gone."""
    differ = sorted(k for k, v in files.items() if COMMITTED.get(k) != v)
    gone = sorted(k for k in COMMITTED if k not in files)
    return differ, gone


def test_new_hopper_head_dim():
    # d=80 on the Hopper 16-bit path: a head-dim row, a two-consumer tile row, the path's list.
    module = manifest_with(
        ('"fp16_sm90", "sm90", "16bit", (64, 96,', '"fp16_sm90", "sm90", "16bit", (64, 80, 96,'),
        ("HEAD_DIM_SHAPES = (\n", "HEAD_DIM_SHAPES = (\n    HeadDimShape(80, 128, 256, 64),\n"),
        ("SM90_TILES = (\n",
         'SM90_TILES = (\n'
         '    Sm90Tile(80, "16bit", 2, 128, "SM90_STAGES", "SM90_FMA_EXP2_D128"),\n'))
    files, problems = generate(module)
    assert not problems, problems
    differ, gone = changed(files)
    new_units = ["kernels/src/instantiations/attention_sm90_bf16_d80.cu",
                 "kernels/src/instantiations/attention_sm90_f16_d80.cu",
                 "kernels/src/instantiations/sharp_redo_bf16_d80.cu",
                 "kernels/src/instantiations/sharp_redo_f16_d80.cu"]
    # N = 136 for P·V exists already: the wgmma wrappers stay as they are.
    assert differ == sorted(new_units + ["kernels/include/sageattn/manifest.h",
                                         "kernels/src/common/tile_config.h",
                                         "kernels/src/dispatch.h",
                                         "python/sageattention/_manifest.py"]), differ
    assert not gone, gone
    assert "launch_attention_sm90<80, half>" in files[new_units[1]]
    dispatch = files["kernels/src/dispatch.h"]
    assert "launch_attention_sm90<80, __nv_bfloat16>(a, batch, s)" in dispatch
    assert "launch_sharp_redo<80, half>(a, sms, programmatic, s)" in dispatch
    header = files["kernels/include/sageattn/manifest.h"]
    assert "kSupportedHeadDims[] = {64, 80, 96, 128, 192, 256}" in header, header
    assert "kHopperOnlyHeadDims[] = {80, 96, 192}" in header
    tiles = files["kernels/src/common/tile_config.h"]
    assert "    {80, 128, 256, 64, 0}," in tiles
    assert "    {80, false, 2, 128, SAGEATTN_SM90_STAGES, SAGEATTN_SM90_FMA_EXP2_D128}," in tiles
    assert '"fp16_sm90": (64, 80, 96, 128, 192, 256)' in files["python/sageattention/_manifest.py"]


def test_new_head_dim_on_a_path():
    # d=192 on the mma.sync 16-bit path: the head dim has its shape row; the path needs its tile.
    module = manifest_with(('Path("fp16", "mma", "16bit", (64, 128, 256)',
                            'Path("fp16", "mma", "16bit", (64, 128, 192, 256)'),
                           ('    MmaTile("fp16", 256, 1),\n',
                            '    MmaTile("fp16", 192, 1),\n    MmaTile("fp16", 256, 1),\n'))
    files, problems = generate(module)
    assert not problems, problems
    differ, _ = changed(files)
    assert "kernels/src/instantiations/attention_fp16_f16_d192.cu" in differ, differ
    assert "kernels/src/instantiations/attention_fp16_bf16_d192_fp16_block.cu" not in files
    assert "    {PvPath::fp16, 192, 1, 0, 0}," in files["kernels/src/common/tile_config.h"]
    dispatch = files["kernels/src/dispatch.h"]
    assert "launch_attention<192, PvPath::fp16, half, PvAccum::fp32>" in dispatch
    # The Hopper-only head dims lose 192.
    assert "kHopperOnlyHeadDims[] = {96}" in files["kernels/include/sageattn/manifest.h"]


def test_head_dim_removed():
    module = manifest_with(
        ('"fp16_sm90", "sm90", "16bit", (64, 96,', '"fp16_sm90", "sm90", "16bit", (64,'),
        ("    HeadDimShape(96, 128, 256, 64),\n", ""),
        ('    Sm90Tile(96, "16bit", 2, 128, "SM90_STAGES", "SM90_FMA_EXP2_D128"),\n', ""))
    files, problems = generate(module)
    assert not problems, problems
    _, gone = changed(files)
    assert gone == ["kernels/src/instantiations/attention_sm90_bf16_d96.cu",
                    "kernels/src/instantiations/attention_sm90_f16_d96.cu",
                    "kernels/src/instantiations/sharp_redo_bf16_d96.cu",
                    "kernels/src/instantiations/sharp_redo_f16_d96.cu"], gone
    assert "case 96:" not in files["kernels/src/dispatch.h"]
    assert "{96," not in files["kernels/src/common/tile_config.h"]


def test_missing_rows_refused():
    module = manifest_with(('"fp16_sm90", "sm90", "16bit", (64, 96,',
                            '"fp16_sm90", "sm90", "16bit", (64, 80, 96,'),
                           ("    MmaTile(\"fp8\", 64, 1, 1, 4),\n", ""),
                           ('"SM90_STAGES_D256", "SM90_FMA_EXP2_D256"',
                            '"SM90_STAGES_D256", "NO_SUCH"'))
    _, problems = generate(module)
    assert problems == [
        "HEAD_DIM_SHAPES has no row for head dim 80",
        "MMA_TILES has no row for ('fp8', 64)",
        "SM90_TILES has no row for (80, '16bit', 2 consumers)",
        "Sm90Tile (256, '16bit', 2, 64, 'SM90_STAGES_D256', 'NO_SUCH') names no knob 'NO_SUCH'",
    ], problems


def test_committed_rows_complete():
    assert gen.manifest.missing_rows() == []
    # Every knob is defined once, in the generated table header, and named by some cell or read
    # by a kernel source.
    tiles = COMMITTED["kernels/src/common/tile_config.h"]
    m = gen.manifest
    cells = {v for row in (*m.HEAD_DIM_SHAPES, *m.MMA_TILES, *m.SM90_TILES) for v in row}
    sources = ""
    for folder, _, names in os.walk(os.path.join(KERNELS, "src")):
        for name in names:
            if name != "tile_config.h" and name.endswith((".h", ".cuh", ".cu", ".cpp")):
                with open(os.path.join(folder, name)) as f:
                    sources += f.read()
    for knob in m.KNOBS:
        assert tiles.count(f"#ifndef SAGEATTN_{knob.name}\n") == 1, knob.name
        assert knob.name in cells or f"SAGEATTN_{knob.name}" in sources, f"{knob.name}: unused"
        assert f"#ifndef SAGEATTN_{knob.name}" not in sources, f"{knob.name}: defined twice"
    # ... and overridden one way only (a -D in the compiler flags): a build file that set a knob
    # itself would silently undo an override given the documented way.
    build_files = ""
    for folder, _, names in os.walk(os.path.join(KERNELS, "..")):
        if any(part in folder for part in ("/build", "/.git", "/.upstream")):
            continue
        for name in names:
            if name == "CMakeLists.txt" or name.endswith((".cmake", ".toml")):
                with open(os.path.join(folder, name), errors="replace") as f:
                    build_files += f.read()
    for knob in m.KNOBS:
        assert f"SAGEATTN_{knob.name}" not in build_files, f"{knob.name}: set by a build file"


def main():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for test in tests:
        test()
    print(f"generate_instantiations_test: {len(tests)} passed")


if __name__ == "__main__":
    main()
