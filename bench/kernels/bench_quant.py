#!/usr/bin/env python3
"""Speed of the quantization alone (what sageattn() pays before the attention kernel) against
the copy rate measured in the same run. Prints a table, writes JSON (--json).

  needed      bytes that must move at least once: K (and V on the FP8 paths) read in 16 bits
              and written in 8 (Q is quantized by the attention kernels as they read it)
  copy rate   a device-to-device torch copy of 1 GiB, counted as bytes read + written
  % of copy   time the needed bytes take at the copy rate / measured time

Several builds of the library can be compared in one run: --libs old=path/a.so,new=path/b.so.

--no-smooth-k times the quantization without K's smoothing: on the fp16 path it then needs no
statistics at all, which separates the quantizing jobs' own speed from the statistics' cost.

Usage: bench_quant.py [--json OUT] [--libs name=path,...] [--seqs 1024,4096,32768] [--no-smooth-k]
                      [--paths fp16,fp8,fp8_sm90,fp16_sm90]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "tests"))
import sageattn_ctypes as sc  # noqa: E402
from bench_kernels import time_ms  # noqa: E402


def copy_rate():
    """Bytes per second of a device-to-device copy (read + write counted)."""
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src))
    return 2 * src.numel() / (ms / 1e3)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--libs", help="name=path,... (default: the library of $SAGEATTN_CAPI)")
    parser.add_argument("--seqs", default="1024,4096,32768")
    parser.add_argument("--no-smooth-k", action="store_true")
    parser.add_argument("--paths", default="fp16,fp8", help="comma-separated P·V paths (the "
                        "Hopper ones quantize the same as fp16 and fp8: K, and V for FP8)")
    args = parser.parse_args()
    libs = ([item.split("=", 1) for item in args.libs.split(",")] if args.libs
            else [("lib", None)])
    libs = [(name, sc.load(path)) for name, path in libs]
    rate = copy_rate()
    print(f"GPU: {torch.cuda.get_device_name()}, copy rate {rate / 1e12:.2f} TB/s")
    print(f"{'lib':>8} {'path':>8} {'d':>3} {'seq':>6} {'batch':>5} {'heads':>5} | "
          f"{'ms':>7} {'needed GB':>9} {'TB/s':>6} {'% copy':>6}")
    rows = []
    for d, heads in ((128, 32), (64, 64)):
        for seq in map(int, args.seqs.split(",")):
            b = max(1, 32768 // seq)
            q, k, v = (torch.randn(b, heads, seq, d, device="cuda", dtype=torch.float16)
                       for _ in range(3))
            o = torch.empty_like(q)
            for path in args.paths.split(","):
                # 16-bit in, 8-bit out: K, and V on the FP8 paths (the 16-bit P·V reads V as
                # it is).
                needed = (2 if path.startswith("fp8") else 1) * q.numel() * (2 + 1)
                for name, lib in libs:
                    call = sc.Call(lib, q, k, v, o, "HND", causal=False, path=path,
                                   smooth_k=not args.no_smooth_k)
                    ms = time_ms(lambda: call.run(1), reps=50)
                    achieved = needed / (ms / 1e3)
                    row = {"lib": name, "path": path, "d": d, "seq": seq, "batch": b,
                           "heads": heads, "smooth_k": not args.no_smooth_k, "ms": ms,
                           "needed_bytes": needed,
                           "bytes_per_s": achieved, "fraction_of_copy": achieved / rate}
                    rows.append(row)
                    print(f"{name:>8} {path:>8} {d:>3} {seq:>6} {b:>5} {heads:>5} | {ms:7.3f} "
                          f"{needed / 1e9:9.3f} {achieved / 1e12:6.2f} {100 * achieved / rate:5.0f}%")
    if args.json:
        with open(args.json, "w") as fp:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "copy_bytes_per_s": rate, "rows": rows}, fp, indent=1)


if __name__ == "__main__":
    main()
