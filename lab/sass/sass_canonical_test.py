#!/usr/bin/env python3
"""sass_canonical.py: the two ways ptxas writes one comparison become one line; every other
difference stays a difference."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_canonical import canonical_line, comparable, verdict  # noqa: E402

failures = 0


def check(name, ok):
    global failures
    print(("ok   " if ok else "FAIL ") + name)
    failures += not ok


same = [
    ("        ISETP.GT.AND P3, PT, R145.reuse, R32.reuse, P0 ;",
     "        ISETP.LT.AND P3, PT, R32, R145, P0 ;"),
    ("        ISETP.GE.OR P4, PT, R1, R2, !P0 ;", "        ISETP.LE.OR P4, PT, R2, R1, !P0 ;"),
    ("  @!P1  ISETP.GT.U32.AND P2, PT, R7, R9, P2 ;", "  @!P1  ISETP.LT.U32.AND P2, PT, R9, R7, P2 ;"),
    ("        ISETP.NE.AND P0, PT, R5, R4, PT ;", "        ISETP.NE.AND P0, PT, R4, R5, PT ;"),
    ("        IADD3 R49, R145.reuse, 0x20, RZ ;", "        IADD3 R49, R145, 0x20, RZ ;"),
]
for a, b in same:
    check(f"one comparison: {a.strip()} == {b.strip()}", canonical_line(a) == canonical_line(b))

different = [
    ("        ISETP.GT.AND P3, PT, R1, R2, P0 ;", "        ISETP.GT.AND P3, PT, R2, R1, P0 ;"),
    ("        ISETP.GT.AND P3, PT, R1, R2, P0 ;", "        ISETP.GE.AND P3, PT, R1, R2, P0 ;"),
    ("        ISETP.GT.AND P3, PT, R1, R2, P0 ;", "        ISETP.LT.AND P3, PT, R1, R2, P0 ;"),
    ("        ISETP.GT.AND P3, PT, R1, R2, P0 ;", "        ISETP.LT.OR P3, PT, R2, R1, P0 ;"),
    ("        ISETP.GT.AND P3, PT, R1, R2, P0 ;", "        ISETP.GT.U32.AND P3, PT, R1, R2, P0 ;"),
    ("        ISETP.GT.AND P3, PT, R1, 0x20, P0 ;", "        ISETP.LT.AND P3, PT, R1, 0x20, P0 ;"),
    ("        IADD3 R49, R145, 0x20, RZ ;", "        IADD3 R49, R145, 0x21, RZ ;"),
    ("        ISETP.GT.U32.AND.EX P2, PT, R7, R9, P2, P3 ;",
     "        ISETP.LT.U32.AND.EX P2, PT, R9, R7, P2, P3 ;"),
    ("        FSETP.GT.AND P3, PT, R1, R2, PT ;", "        FSETP.LT.AND P3, PT, R2, R1, PT ;"),
]
for a, b in different:
    check(f"different: {a.strip()} != {b.strip()}", canonical_line(a) != canonical_line(b))
# A listing as cuobjdump prints it: addresses, encodings, the source's path and the digest in
# anonymous-namespace names differ between two builds of the same code in two folders.
raw_a = """
	code for sm_90a
		Function : _ZN8sageattn6detail25_GLOBAL__N__3e1f2a9c_17_quantize_cu_4d2a11e06kernelEv
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */
                                                                           /* 0x000fe20000000800 */
        /*0010*/                   ISETP.GT.AND P0, PT, R2.reuse, R3, PT ; /* 0x000000030200720c */
	identifier = /work/a/kernels/src/quantize/quantize.cu
"""
raw_b = (raw_a.replace("3e1f2a9c_17", "99a60558_17").replace("4d2a11e0", "0c0ffee0")
         .replace("/work/a/", "/tmp/b/").replace("/* 0x000000030200720c */", "/* 0x000000030200730c */")
         .replace("ISETP.GT.AND P0, PT, R2.reuse, R3, PT", "ISETP.LT.AND P0, PT, R3, R2, PT"))
check("two builds' listings: the same once comparable and canonical",
      verdict(comparable(raw_a), comparable(raw_b)) == "equivalent")
check("a listing is the same as itself", verdict(comparable(raw_a), comparable(raw_a)) == "same")
raw_c = raw_a.replace("LDC R1, c[0x0][0x28]", "LDC R1, c[0x0][0x2c]")
check("another operand is a difference", verdict(comparable(raw_a), comparable(raw_c)).startswith("different"))
raw_d = raw_a.replace("LDC R1", "MOV R1")
check("another opcode is a difference, named",
      "LDC 1->0" in verdict(comparable(raw_a), comparable(raw_d)))
print(f"sass_canonical_test: {failures} failed")
sys.exit(1 if failures else 0)
