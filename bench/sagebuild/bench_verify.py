#!/usr/bin/env python3
"""Benchmark: `sagebuild verify-wheel` on a large generated wheel, against the `wheel` package's
full RECORD verification of the same file in the same run (printed, never asserted).

The wheel: ~2,000 entries and ~300 MB, shaped like a CUDA extension wheel (a few large binaries
that deflate about 3:1, many small Python/text files). Throughput is shown next to this machine's
raw SHA-256 (hashlib/OpenSSL) and inflate (zlib) rates, measured by this script on the same bytes.

Usage: bench_verify.py SAGEBUILD [--size-mb 300] [--entries 2000] [--runs 3] [--json OUT]
Run with a Python that has the `wheel` package (build/pytools/bin/python).
"""
import argparse
import base64
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

from wheel.wheelfile import WheelFile


def binary_like(rng, size):
    """Bytes that deflate about 3:1, like compiled code: random runs, zero runs, repeats."""
    out = bytearray()
    while len(out) < size:
        kind = rng.random()
        n = rng.randint(64, 4096)
        if kind < 0.35:
            out += rng.randbytes(n)
        elif kind < 0.6:
            out += bytes(n)
        else:
            out += (rng.randbytes(16) * (n // 16 + 1))[:n]
    return bytes(out[:size])


def make_wheel(path, size_mb, entries, seed):
    rng = random.Random(seed)
    name, version = "sageattention", "2.2.0"
    dist = f"{name}-{version}.dist-info"
    big = 12
    big_size = size_mb * (1 << 20) * 9 // 10 // big
    small = entries - big - 3
    small_size = max(1, size_mb * (1 << 20) // 10 // small)
    files = {}
    for i in range(big):
        files[f"{name}/_kernels_{i}.cpython-312-x86_64-linux-gnu.so"] = binary_like(rng, big_size)
    words = [rng.randbytes(6).hex() for _ in range(500)]
    for i in range(small):
        text = " ".join(rng.choice(words) for _ in range(small_size // 12))
        files[f"{name}/sub{i % 40}/module_{i}.py"] = text.encode()[:small_size]
    files[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    files[f"{dist}/WHEEL"] = (b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
                              b"Tag: cp312-cp312-linux_x86_64\nBuild: 280.129\n")
    rows = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for p, data in files.items():
            z.writestr(p, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{p},sha256={digest},{len(data)}")
        rows.append(f"{dist}/RECORD,,")
        z.writestr(f"{dist}/RECORD", "\n".join(rows) + "\n")
    return sum(len(d) for d in files.values())


def time_runs(fn, runs):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def wheel_package_verify(path):
    with WheelFile(path) as wf:
        for info in wf.infolist():
            if not info.filename.endswith("RECORD"):
                wf.read(info)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sagebuild")
    parser.add_argument("--size-mb", type=int, default=300)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl")
        inflated = make_wheel(path, args.size_mb, args.entries, seed=1)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            f.read()  # warm the page cache for every contender alike

        def sagebuild(threads):
            argv = [args.sagebuild, "verify-wheel", "--select", "A,R", path]
            if threads:
                argv += ["--threads", str(threads)]
            done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"sagebuild failed:\n{done.stdout}{done.stderr}")

        t_wheel = time_runs(lambda: wheel_package_verify(path), args.runs)
        t_sb1 = time_runs(lambda: sagebuild(1), args.runs)
        t_sb = time_runs(lambda: sagebuild(0), args.runs)
        t_full = time_runs(lambda: subprocess.run(
            [args.sagebuild, "verify-wheel", "--ignore", "N002,P001,B004", path],
            capture_output=True), args.runs)

        # Raw rates on the same bytes: what one core can do at best.
        with zipfile.ZipFile(path) as z:
            infos = [i for i in z.infolist() if i.compress_type == zipfile.ZIP_DEFLATED]
            with open(path, "rb") as f:
                raw = []
                for i in infos:
                    f.seek(i.header_offset + 26)
                    n, m = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
                    f.seek(i.header_offset + 30 + n + m)
                    raw.append(f.read(i.compress_size))
        plain = []
        t_inflate = time_runs(lambda: plain.extend(zlib.decompressobj(-15).decompress(c) for c in raw)
                              if not plain else [zlib.decompressobj(-15).decompress(c) for c in raw],
                              args.runs)
        t_sha = time_runs(lambda: [hashlib.sha256(p).digest() for p in plain], args.runs)

    mb = inflated / 1e6
    rows = [
        ("wheel package (WheelFile, hash per member)", t_wheel),
        ("sagebuild verify-wheel --select A,R, 1 thread", t_sb1),
        ("sagebuild verify-wheel --select A,R", t_sb),
        ("sagebuild verify-wheel, all checks", t_full),
        ("raw zlib inflate (Python, 1 core)", t_inflate),
        ("raw sha256 (hashlib/OpenSSL, 1 core)", t_sha),
    ]
    print(f"wheel: {size / 1e6:.0f} MB on disk, {mb:.0f} MB inflated, {args.entries} entries; "
          f"{os.cpu_count()} cores; median of {args.runs}")
    print(f"{'':<48} {'seconds':>8} {'MB/s':>8} {'vs wheel':>9}")
    for label, t in rows:
        print(f"{label:<48} {t:>8.3f} {mb / t:>8.0f} {t_wheel / t:>8.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": size, "inflated": inflated, "entries": args.entries,
                       "rows": [{"label": l, "seconds": t} for l, t in rows]}, f, indent=2)


if __name__ == "__main__":
    main()
