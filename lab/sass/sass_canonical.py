#!/usr/bin/env python3
"""Whether two builds of a kernel compute the same thing, read from their SASS.

A listing (`cuobjdump -sass`) is first made comparable: instruction addresses and encodings,
the digest nvcc puts in anonymous-namespace names (from the source's path) and the source's
path itself are dropped. Two listings are then
  same        identical;
  equivalent  identical in canonical form: ptxas writes a comparison of two registers either
              way round (`ISETP.GT.AND P3, PT, R1, R2, P0` or `ISETP.LT.AND P3, PT, R2, R1, P0`,
              the same predicate) and marks operands `.reuse` (a hint to the operand cache, no
              effect on results) where its schedule happens to allow; both are rewritten to one
              form. Same instructions, same operands, same order: the same outputs bit for bit;
  different   anything else (an instruction, an operand, their order), with the opcode counts
              that changed.

Usage:
  sass_canonical.py listing OBJECT > LISTING       the comparable listing of an object file
  sass_canonical.py compare A.sass B.sass          same / equivalent / different (exit 0, 0, 1)
  sass_canonical.py compare-builds DIR_A DIR_B     every CUDA object of two build trees, matched
                                                   by file name (exit 1 if any differs)
cuobjdump comes from PATH.
"""
import collections
import os
import re
import subprocess
import sys

# Integer comparisons of two registers only: float ones (FSETP) and the extended 64-bit form
# (.EX, whose predicate input carries the low words' result) are left as written, so that a
# difference there stays a difference.
_COMPARE = re.compile(
    r"^(?P<head>\s*(?:@!?U?P\w+\s+)?)ISETP\.(?P<cmp>LT|LE|GT|GE|EQ|NE)(?P<mods>(?:\.U32)?\.(?:AND|OR|XOR))"
    r"\s+(?P<p>U?P\w+), (?P<q>U?P\w+), (?P<a>-?R\w+), (?P<b>-?R\w+), (?P<rest>.*)$")
_FLIP = {"GT": "LT", "GE": "LE", "LT": "GT", "LE": "GE", "EQ": "EQ", "NE": "NE"}


def comparable(listing: str) -> str:
    """cuobjdump's listing without what differs between two builds of one computation."""
    out = []
    for line in listing.splitlines():
        line = re.sub(r"/\*[0-9a-f]{4,}\*/", "", line)          # addresses
        line = re.sub(r" +/\* 0x[0-9a-f]+ \*/", "", line)       # encodings
        line = re.sub(r"_GLOBAL__N__[0-9a-f]+_[0-9]+_([A-Za-z0-9_]+)_cu_[0-9a-f]{8}", r"_GLOBAL__N__\1", line)
        if not line.strip() or re.match(r"^\s*/\* 0x", line) or re.match(r"^\s*identifier = ", line):
            continue  # (identifier: the source's path)
        out.append(line + "\n")
    return "".join(out)


def canonical_line(line: str) -> str:
    line = line.replace(".reuse", "")
    m = _COMPARE.match(line)
    if not m:
        return line
    cmp, a, b = m["cmp"], m["a"], m["b"]
    # One order for the two operands: the comparison written as LT/LE where it was GT/GE, with
    # its operands swapped (a > b is b < a); EQ/NE with the operands sorted.
    if cmp in ("GT", "GE") or (cmp in ("EQ", "NE") and a > b):
        cmp, a, b = _FLIP[cmp], b, a
    return f"{m['head']}ISETP.{cmp}{m['mods']} {m['p']}, {m['q']}, {a}, {b}, {m['rest']}"


def canonical(text: str) -> str:
    return "".join(canonical_line(line) for line in text.splitlines(keepends=True))


def opcodes(text: str) -> collections.Counter:
    c = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"\s+(?:@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)", line)
        if m and not line.strip().startswith(("Function", ".")):
            c[m.group(1)] += 1
    return c


def verdict(a: str, b: str) -> str:
    """'same', 'equivalent', or 'different: ' and what changed."""
    if a == b:
        return "same"
    if canonical(a) == canonical(b):
        return "equivalent"
    ca, cb = opcodes(a), opcodes(b)
    if ca == cb:
        return f"different: the same {sum(ca.values())} instructions, opcode for opcode; other registers or order"
    changes = ", ".join(f"{op} {ca[op]}->{cb[op]}" for op in sorted(set(ca) | set(cb)) if ca[op] != cb[op])
    return f"different: instructions {sum(ca.values())} -> {sum(cb.values())}: {changes[:600]}"


def listing(obj: str) -> str:
    return comparable(subprocess.run(["cuobjdump", "-sass", obj], check=True, capture_output=True,
                                     text=True).stdout)


def cuda_objects(root: str) -> dict:
    found = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".cu.o"):
                found.setdefault(f, os.path.join(d, f))
    return found


def compare_builds(a_root: str, b_root: str) -> int:
    a, b = cuda_objects(a_root), cuda_objects(b_root)
    status = 0
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print(f"DIFFERENT  {name}: only in {a_root if name in a else b_root}")
            status = 1
            continue
        v = verdict(listing(a[name]), listing(b[name]))
        if v.startswith("different"):
            print(f"DIFFERENT  {name}: {v[len('different: '):]}")
            status = 1
        else:
            print(f"{v:<10} {name}")
    print(f"{len(set(a) | set(b))} objects compared")
    return status


def main(argv):
    if len(argv) == 3 and argv[1] == "listing":
        sys.stdout.write(listing(argv[2]))
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        with open(argv[2]) as fa, open(argv[3]) as fb:
            v = verdict(fa.read(), fb.read())
        print(v)
        return 1 if v.startswith("different") else 0
    if len(argv) == 4 and argv[1] == "compare-builds":
        return compare_builds(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
