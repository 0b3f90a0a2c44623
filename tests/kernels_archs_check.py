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
    # The cubins are listed under the archive member (object file) they belong to, which names
    # the instantiation ("member ...libsageattn.a:attention_fp8_f16_d128.cu.o:"); the cubins'
    # own names do not.
    cubins, fp8_archs, member = [], set(), ""
    for line in out.stdout.splitlines():
        if line.startswith("member "):
            member = line
        elif (found := re.search(r"ELF file\s+\d+: (\S+)", line)):
            cubins.append(found.group(1))
            if "attention_fp8_" in member:
                fp8_archs.add(re.search(r"\.(sm_\d+a?)\.cubin$", found.group(1)).group(1))
    archs = {re.search(r"\.(sm_\d+a?)\.cubin$", c).group(1) for c in cubins}
    problems = []
    fp8_wanted = sorted(a for a in wanted if int(re.match(r"sm_(\d+)", a).group(1)) >= 89)
    for want in fp8_wanted:
        if want not in fp8_archs:
            problems.append(f"no FP8 instantiation has {want} SASS in {library}")
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
