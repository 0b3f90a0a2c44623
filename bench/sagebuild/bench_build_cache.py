#!/usr/bin/env python3
"""Benchmark: what the kernel cache and the up-to-date check save (printed, never asserted).

Builds the same three entries of a profile (three Pythons, one torch, one CUDA) four ways in
one run, each from clean per-entry build directories, with the entries' environments already
made (they are the same for every way, and made once per machine):

  naive      --no-cache: every wheel compiles the kernels itself (what per-wheel builds do)
  cold       empty kernel and binding caches: the first entry compiles the kernels and the
             binding, the others package them
  warm       filled caches: no entry compiles anything
  no change  a second run with nothing changed: every wheel is up to date

and prints wall times, the ratios, and each entry's phase times from build/results/.

Usage: bench_build_cache.py SAGEBUILD [--profile native-cu130] [--python 3.11 3.12 3.13]
                            [--cache-dir DIR] [--jobs N] [--json OUT]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time


def entries_of(sagebuild, profile, pythons):
    out = subprocess.run([sagebuild, "matrix", "--profile", profile, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    rows = data["include"] if isinstance(data, dict) else data
    return [r["id"] for r in rows if r["python"] in pythons]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sagebuild")
    ap.add_argument("--profile", default="native-cu130")
    ap.add_argument("--python", nargs="+", default=["3.11", "3.12", "3.13"])
    ap.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/sagebuild"))
    ap.add_argument("--jobs", default="1")
    ap.add_argument("--json", default="build/bench/build_cache.json")
    args = ap.parse_args()
    sagebuild = os.path.abspath(args.sagebuild)
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                          text=True, check=True).stdout.strip()
    entries = entries_of(sagebuild, args.profile, args.python)
    dist = os.path.join(root, "build", "bench", "dist")
    base = [sagebuild, "build", "--profile", args.profile, "--cache-dir", args.cache_dir,
            "--dist", dist, "--jobs", args.jobs]
    for e in entries:
        base += ["--entry", e]

    def run(name, extra, clean=True):
        if clean:
            for e in entries:
                shutil.rmtree(os.path.join(root, "build", "sagebuild", e), ignore_errors=True)
        start = time.monotonic()
        done = subprocess.run(base + extra, capture_output=True, text=True, cwd=root)
        seconds = time.monotonic() - start
        if done.returncode != 0:
            sys.exit(f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr}")
        phases = {}
        for e in entries:
            with open(os.path.join(root, "build", "results", e + ".json")) as f:
                phases[e] = json.load(f).get("phases", {})
        print(f"  {name:<10} {seconds:7.1f} s", flush=True)
        return {"seconds": seconds, "phases": phases}

    print(f"{len(entries)} entries of {args.profile} (jobs {args.jobs}): {', '.join(entries)}")
    # The environments first (not timed: the same for every way).
    subprocess.run(base + ["--force", "--no-import-test"], check=True, capture_output=True, cwd=root)
    results = {}
    results["naive"] = run("naive", ["--force", "--no-cache"])
    for cached in ("kernels", "bindings"):
        shutil.rmtree(os.path.join(args.cache_dir, cached), ignore_errors=True)
    results["cold"] = run("cold", ["--force"])
    results["warm"] = run("warm", ["--force"])
    results["no change"] = run("no change", [], clean=False)

    naive, cold = results["naive"]["seconds"], results["cold"]["seconds"]
    warm, same = results["warm"]["seconds"], results["no change"]["seconds"]
    print()
    print(f"{'way':<10} {'seconds':>8} {'vs naive':>9}")
    for name, r in results.items():
        print(f"{name:<10} {r['seconds']:8.1f} {naive / r['seconds']:8.1f}x")
    print(f"\ncold vs naive {naive / cold:.2f}x (goal 2.5x); no change vs cold {cold / same:.0f}x "
          f"(goal 10x); warm vs naive {naive / warm:.2f}x")
    print("\nphase seconds per entry (naive | cold | warm):")
    for e in entries:
        cells = []
        for way in ["naive", "cold", "warm"]:
            p = results[way]["phases"][e]
            cells.append(" ".join(f"{k[:4]} {v:4.1f}" for k, v in p.items()))
        print(f"  {e}\n    " + "\n    ".join(cells))
    os.makedirs(os.path.dirname(os.path.join(root, args.json)), exist_ok=True)
    with open(os.path.join(root, args.json), "w") as f:
        json.dump({"entries": entries, "jobs": args.jobs, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
