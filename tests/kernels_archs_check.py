#!/usr/bin/env python3
"""The kernel library CI builds must really contain SASS for sm_80 and sm_90a (and the FP8
instantiations none for sm_80): checked with NVIDIA's cuobjdump on the static library.

Usage: kernels_archs_check.py CUOBJDUMP LIBSAGEATTN.a
"""
import re
import subprocess
import sys


def main():
    cuobjdump, library = sys.argv[1:3]
    out = subprocess.run([cuobjdump, "--list-elf", library], capture_output=True, text=True)
    cubins = re.findall(r"ELF file\s+\d+: (\S+)", out.stdout)
    archs = {re.search(r"\.(sm_\d+a?)\.cubin$", c).group(1) for c in cubins}
    fp8_archs = {re.search(r"\.(sm_\d+a?)\.cubin$", c).group(1) for c in cubins if "fp8" in c}
    problems = []
    for want in ("sm_80", "sm_90a"):
        if want not in archs:
            problems.append(f"no {want} SASS in {library}")
    if "sm_80" in fp8_archs:
        problems.append("FP8 instantiations were compiled for sm_80, which has no FP8 mma")
    print(f"cubins: {len(cubins)}; architectures: {', '.join(sorted(archs))}; "
          f"fp8 instantiations: {', '.join(sorted(fp8_archs))}")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
