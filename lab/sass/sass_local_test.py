#!/usr/bin/env python3
"""sass_local.sh on a knob whose effect on the SASS is known: SAGEATTN_SM90_FMA_EXP2_D64_C3=2
moves 2 of the 16 exp2 column groups of the d=64 three-warpgroup kernel from the MUFU to an FMA
polynomial, so that kernel loses MUFU.EX2 and gains FFMA while its wgmma stay the same.
Needs nvcc; exits 77 (skipped) without one."""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    if not (os.environ.get("CUDACXX") or shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")):
        print("no nvcc: skipped")
        return 77
    run = subprocess.run(["bash", os.path.join(HERE, "sass_local.sh"), "attention_sm90_e4m3_d64",
                          "-DSAGEATTN_SM90_FMA_EXP2_D64_C3=2"], capture_output=True, text=True,
                         env={**os.environ, "TOP": "1000"})  # every opcode
    print(run.stdout, run.stderr)
    assert run.returncode == 0, run.returncode
    out = run.stdout
    # Both builds report all four kernels (two and three consumer warpgroups, each for dense and
    # varlen calls), with their spills.
    sections = out.split("== ")
    for label in ("committed", "with -DSAGEATTN_SM90_FMA_EXP2_D64_C3=2"):
        section = next(s for s in sections if s.startswith(label))
        assert len(re.findall(r"attention_sm90_kernel\w+: spills \d+/\d+ B, \d+ registers", section)) == 4, section
    counts = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
              for m in re.finditer(r"^  (\S+(?: \S+)?)\s+(\d+)\s+(\d+)\s+([+-]\d+)$", out, re.M)}
    for op, (base, variant, diff) in counts.items():
        assert variant - base == diff, (op, base, variant, diff)
    assert counts["MUFU.EX2"][2] < 0, counts["MUFU.EX2"]
    assert counts["FFMA"][2] > 0, counts["FFMA"]
    igmma = [v for op, v in counts.items() if op.startswith("IGMMA") or op.startswith("QGMMA")]
    assert igmma and all(d == 0 for _, _, d in igmma), igmma
    assert counts["all instructions"][0] > 1000, counts["all instructions"]
    # A file that is not an instantiation is refused with the list of those there are.
    bad = subprocess.run(["bash", os.path.join(HERE, "sass_local.sh"), "attention_sm91"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "attention_sm90_e4m3_d64" in bad.stderr, bad.stderr
    print("sass_local: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
