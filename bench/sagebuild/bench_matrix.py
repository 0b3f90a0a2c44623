#!/usr/bin/env python3
"""Benchmark: sagebuild's matrix commands on a large synthetic matrix (printed, never asserted).

Generates 5 Pythons x 12 torch releases x 4 CUDA toolkits x 2 platforms (480 combinations) with
many profiles (one per torch, per Python, per CUDA, latest-Python views, and unions of them),
then times `validate`, `matrix --profile all --format json` and `bake` (all profiles), reporting
wall time (median of N runs) and peak resident memory (getrusage of the child). For scale, the
same file is parsed in the same run by PyYAML when it is installed (a parse only: no validation).

Usage: bench_matrix.py SAGEBUILD [--runs N] [--json OUT]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PYTHONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]
CUDAS = ["12.4", "12.6", "12.8", "13.0"]
TORCHES = [f"2.{minor}.{patch}" for minor in range(4, 10) for patch in (0, 1)]  # 12 releases


def synthetic_matrix():
    lines = [
        "schema: 1",
        "package:",
        "  name: demo",
        "  version: {file: VERSION, regex: '^(.+)$'}",
        "  source_dir: python",
        '  entry_id: "{platform}-pytorch{torch_major}{torch_minor}{torch_patch}'
        '-cu{cuda_major}{cuda_minor}-python{python_major}{python_minor}"',
        "architectures:",
        '  "8.0": ">=11.0"',
        '  "9.0a": ">=12.0"',
        '  "12.0": ">=12.8"',
        'default_archs: ["8.0", "9.0a", "12.0"]',
        "cuda:",
    ]
    lines += [f'  "{c}": {{version: "{c}.1"}}' for c in CUDAS]
    lines.append("torch:")
    py = ", ".join(f'"{p}"' for p in PYTHONS)
    cu = ", ".join(f'"{c}"' for c in CUDAS)
    lines += [f'  "{t}": {{cuda: [{cu}], python: [{py}]}}' for t in TORCHES]
    lines += [
        "platforms:",
        "  linux: {tag: linux_x86_64, os: linux, docker: linux/amd64}",
        "  windows: {tag: win_amd64, os: windows}",
        "profiles:",
        "  all: {description: every combination}",
        "  stable: {from: all, latest: python}",
        "  newest-cuda: {from: all, latest: [python, cuda]}",
    ]
    for t in TORCHES:
        name = t.replace(".", "")
        lines.append(f'  torch{name}: {{from: all, include: [{{torch: "{t}"}}]}}')
    for p in PYTHONS:
        lines.append(f'  python{p.replace(".", "")}: {{from: all, include: [{{python: "{p}"}}]}}')
    for c in CUDAS:
        lines.append(f'  cu{c.replace(".", "")}: {{from: all, include: [{{cuda: "{c}"}}], '
                     f'exclude: [{{python: "3.9"}}]}}')
    lines.append("  union: {from: [torch240, python312, cu130], latest: torch}")
    return "\n".join(lines) + "\n"


def timed(argv, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"failed: {' '.join(argv)}\n{done.stderr.decode()}")
    return statistics.median(times), len(done.stdout)


def peak_kib(argv):
    """Peak RSS of one run, measured in a fresh child so earlier runs do not mask it."""
    code = ("import resource,subprocess,sys;"
            "subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,check=True);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    return int(subprocess.check_output([sys.executable, "-c", code] + argv))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sagebuild")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        matrix = os.path.join(tmp, "matrix.yaml")
        with open(matrix, "w") as f:
            f.write(synthetic_matrix())
        with open(os.path.join(tmp, "VERSION"), "w") as f:
            f.write("1.0.0\n")
        sb = [args.sagebuild, "--matrix", matrix]
        commands = {
            "validate": sb + ["validate"],
            "matrix all --format json": sb + ["matrix", "--profile", "all", "--format", "json"],
            "matrix stable (table)": sb + ["matrix", "--profile", "stable"],
            "bake (every profile)": sb + ["bake"],
        }
        rows = []
        for name, argv in commands.items():
            wall, out_bytes = timed(argv, args.runs)
            rows.append({"command": name, "wall_ms": wall * 1000, "peak_rss_kib": peak_kib(argv),
                         "output_bytes": out_bytes})
        try:
            import yaml  # noqa: F401  (PyYAML, for scale only)
            text = open(matrix).read()
            samples = []
            for _ in range(args.runs):
                start = time.perf_counter()
                yaml.safe_load(text)
                samples.append(time.perf_counter() - start)
            pyyaml_ms = statistics.median(samples) * 1000
        except ImportError:
            pyyaml_ms = None

    print(f"synthetic matrix: {len(PYTHONS)} Python x {len(TORCHES)} torch x {len(CUDAS)} CUDA "
          f"x 2 platforms = {len(PYTHONS) * len(TORCHES) * len(CUDAS) * 2} combinations, "
          f"{3 + len(TORCHES) + len(PYTHONS) + len(CUDAS) + 1} profiles; median of {args.runs}")
    print(f"{'command':<28} {'wall ms':>9} {'peak RSS MiB':>13} {'output KiB':>11}")
    for r in rows:
        print(f"{r['command']:<28} {r['wall_ms']:>9.1f} {r['peak_rss_kib'] / 1024:>13.1f} "
              f"{r['output_bytes'] / 1024:>11.1f}")
    if pyyaml_ms is not None:
        print(f"{'(PyYAML safe_load only)':<28} {pyyaml_ms:>9.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "pyyaml_parse_ms": pyyaml_ms}, f, indent=2)


if __name__ == "__main__":
    main()
