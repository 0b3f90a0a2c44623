#!/usr/bin/env python3
"""A kernel library must really contain SASS for the architectures it was built for, and its FP8
instantiations none below sm_89 (no FP8 mma there: they get only the architectures from 8.9 on):
checked with NVIDIA's cuobjdump on the static library. The test command runs it on the library
the wheels link (sagebuild's kernel cache, scripts/test-python.sh); ctest on a build whose
library is part of `all` (kernels.compiled_architectures).

Usage: kernels_archs_check.py CUOBJDUMP LIBSAGEATTN.a [ARCH ...]   (default: sm_80 sm_90a)
"""
import re
import subprocess
import sys


def main():
    cuobjdump, library = sys.argv[1:3]
    wanted = sys.argv[3:] or ["sm_80", "sm_90a"]
    out = subprocess.run([cuobjdump, "--list-elf", library], capture_output=True, text=True)
    cubins = re.findall(r"ELF file\s+\d+: (\S+)", out.stdout)
    archs = {re.search(r"\.(sm_\d+a?)\.cubin$", c).group(1) for c in cubins}
    fp8_archs = {re.search(r"\.(sm_\d+a?)\.cubin$", c).group(1) for c in cubins if "fp8" in c}
    problems = []
    for want in wanted:
        if want not in archs:
            problems.append(f"no {want} SASS in {library}")
    below = sorted(a for a in fp8_archs if int(re.match(r"sm_(\d+)", a).group(1)) < 89)
    if below:
        problems.append(f"FP8 instantiations were compiled for {', '.join(below)}, which have no FP8 mma")
    print(f"cubins: {len(cubins)}; architectures: {', '.join(sorted(archs))}; "
          f"fp8 instantiations: {', '.join(sorted(fp8_archs))}")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
