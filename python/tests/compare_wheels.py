#!/usr/bin/env python3
"""Two builds of the package timed in one run on the GPU machine: sageattn() end to end with each
wheel installed on its own (a fresh directory on top of the machine's torch), in alternating
rounds, on the same shapes (fp16, HND, b·s = 32k tokens, 32 heads at d=128, 64 at d=64). Each
wheel runs in a subprocess of its own (the two register the same operators, so one process cannot
hold both); each cell reports the wheel's best median over the rounds. Prints a table and, with
--json, writes it. Used to show that the universal (stable-ABI) wheel is as fast as the per-torch
one (docs/benchmarks.md).

Usage: compare_wheels.py --wheel NAME=PATH --wheel NAME=PATH [--seqs 1024,4096] [--rounds 3]
                         [--json FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# bench/: the shared CUDA-event timer the worker imports.
BENCH_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")

WORKER = r"""
import json, sys, torch, sageattention, sageattention._ops as ops
from cuda_timing import median_ms  # bench/, on PYTHONPATH
assert ops.available(), ops.LOAD_ERROR
seqs = [int(s) for s in sys.argv[1].split(",")]
cells = []
for d in (128, 64):
    heads = 32 if d == 128 else 64
    for causal in (False, True):
        for seq in seqs:
            batch = max(1, 32768 // seq)
            g = torch.Generator(device="cuda").manual_seed(seq * 7 + d)
            q, k, v = (torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.float16,
                                   generator=g) for _ in range(3))
            ms = median_ms(lambda: sageattention.sageattn(q, k, v, is_causal=causal))
            flops = 4 * batch * heads * seq * seq * d / (2 if causal else 1)
            cells.append({"d": d, "causal": causal, "seq": seq, "ms": ms, "tops": flops / ms / 1e9})
print(json.dumps({"library": ops.LIBRARY, "torch": torch.__version__, "cells": cells}))
"""


def install(path, into):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-compile",
            "--disable-pip-version-check",
            "--target",
            into,
            path,
        ],
        check=True,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheel", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--seqs", default="1024,4096,16384")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    wheels = [w.split("=", 1) for w in args.wheel]
    with tempfile.TemporaryDirectory() as tmp:
        sites = {}
        for name, path in wheels:
            sites[name] = os.path.join(tmp, name)
            install(path, sites[name])
        best, library = {}, {}
        for _ in range(args.rounds):
            for name, _ in wheels:
                env = dict(
                    os.environ,
                    PYTHONPATH=os.pathsep.join(
                        [sites[name], BENCH_DIR, os.environ.get("PYTHONPATH", "")]
                    ),
                )
                done = subprocess.run(
                    [sys.executable, "-c", WORKER, args.seqs],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=tmp,
                )
                if done.returncode != 0:
                    sys.exit(f"{name}: {done.stderr.strip()[-2000:]}")
                result = json.loads(done.stdout.strip().splitlines()[-1])
                library[name] = result["library"]
                for cell in result["cells"]:
                    key = (cell["d"], cell["causal"], cell["seq"])
                    best.setdefault(name, {})
                    if key not in best[name] or cell["tops"] > best[name][key]:
                        best[name][key] = cell["tops"]
    names = [name for name, _ in wheels]
    import torch

    print(
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}; sageattn() TOPS, best of "
        f"{args.rounds} alternating rounds"
    )
    for name in names:
        print(f"  {name}: {os.path.basename(dict(wheels)[name])}")
    print(
        f"{'d':>3} {'causal':>6} {'seq':>6} | "
        + " ".join(f"{n:>12}" for n in names)
        + f" | {names[-1]}/{names[0]}"
    )
    rows = []
    for key in sorted(best[names[0]], key=lambda k: (-k[0], k[1], k[2])):
        values = [best[n][key] for n in names]
        print(
            f"{key[0]:>3} {str(key[1]):>6} {key[2]:>6} | "
            + " ".join(f"{v:>12.0f}" for v in values)
            + f" | {values[-1] / values[0]:.3f}"
        )
        rows.append({"d": key[0], "causal": key[1], "seq": key[2], **dict(zip(names, values))})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "gpu": torch.cuda.get_device_name(),
                    "torch": torch.__version__,
                    "rounds": args.rounds,
                    "wheels": {n: os.path.basename(p) for n, p in wheels},
                    "rows": rows,
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
