#!/usr/bin/env python3
"""The same kernels compiled by two toolkits, side by side from their SASS: which kernels a
wheel's _kernels.so holds for one architecture, and for each kernel both have, its instruction
count, registers and the opcodes whose counts differ most. Used to see whether ptxas 12.4 and
13.0 give the Hopper kernel different code (docs/benchmarks.md, "CUDA 12 and CUDA 13 wheels").

Usage: sass_by_toolkit.py WHEEL_A WHEEL_B [--arch sm_90a] [--match attention] [--json FILE]
cuobjdump comes from PATH (any toolkit that reads both: CUDA 13's reads 12.x cubins).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sass"))
import sass_canonical  # noqa: E402


def plain_name(name):
    """A kernel's name without the digest of its source's path nvcc puts in anonymous namespaces
    (two builds from two checkouts name them differently)."""
    return re.sub(r"_GLOBAL__N__[0-9a-f]+_", "_GLOBAL__N__", name)


def kernels_of(wheel, arch, workdir):
    """{mangled name: (canonical listing, registers)} of the wheel's _kernels.so for `arch`."""
    with zipfile.ZipFile(wheel) as z:
        member = next(n for n in z.namelist() if n.endswith("_kernels.so"))
        path = z.extract(member, os.path.join(workdir, os.path.basename(wheel)))
    sass = subprocess.run(["cuobjdump", "-sass", "-arch", arch, path], check=True, capture_output=True,
                          text=True).stdout
    usage = subprocess.run(["cuobjdump", "-res-usage", "-arch", arch, path], check=True, capture_output=True,
                           text=True).stdout
    registers = {plain_name(n): r for n, r in re.findall(r"Function (\S+):\s*\n?\s*REG:(\d+)", usage)}
    out = {}
    for name, body in re.findall(r"Function : (\S+)\n(.*?)(?=\n\s*Function : |\Z)", sass, re.S):
        name = plain_name(name)
        out[name] = (sass_canonical.canonical(sass_canonical.comparable(body)), int(registers.get(name, 0)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--match", default="", help="only kernels whose mangled name contains this")
    parser.add_argument("--json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        a, b = kernels_of(args.a, args.arch, tmp), kernels_of(args.b, args.arch, tmp)
    rows = []
    print(f"{args.arch}: {len(a)} kernels in A, {len(b)} in B, {len(set(a) & set(b))} in both")
    print(f"{'instr A':>8} {'instr B':>8} {'reg A':>5} {'reg B':>5}  verdict     kernel / largest opcode changes")
    for name in sorted(set(a) & set(b)):
        if args.match not in name:
            continue
        (la, ra), (lb, rb) = a[name], b[name]
        ca, cb = sass_canonical.opcodes(la), sass_canonical.opcodes(lb)
        delta = collections.Counter(cb)
        delta.subtract(ca)
        changes = sorted(((op, n) for op, n in delta.items() if n), key=lambda x: -abs(x[1]))[:6]
        verdict = "same" if la == lb else "different"
        rows.append({"kernel": name, "instructions": [sum(ca.values()), sum(cb.values())], "registers": [ra, rb],
                     "verdict": verdict, "changes": dict(changes)})
        print(f"{sum(ca.values()):8d} {sum(cb.values()):8d} {ra:5d} {rb:5d}  {verdict:10s}  {name[:90]}")
        if changes:
            print(" " * 40 + ", ".join(f"{op} {n:+d}" for op, n in changes))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"arch": args.arch, "a": os.path.basename(args.a), "b": os.path.basename(args.b),
                       "kernels": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
