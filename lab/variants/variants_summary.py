#!/usr/bin/env python3
"""Medians over rounds of sm90_variants.sh's benchmarks (ROUNDS > 1): for each shape, the median
TOPS of each variant's attention kernel and end to end, and cuDNN's, over the rounds in which
every variant was timed once in turn. Reads OUT/NAME-bench-rK.json.

Usage: variants_summary.py OUT NAME [NAME ...]
"""
import glob
import json
import os
import statistics
import sys


def load_rounds(out, name):
    """The rows of each round's JSON of one variant, in round order."""
    files = glob.glob(os.path.join(out, f"{name}-bench-r*.json"))
    files.sort(key=lambda f: int(f.rsplit("-r", 1)[1].split(".")[0]))
    rounds = []
    for name in files:
        with open(name) as f:
            rounds.append(json.load(f)["rows"])
    return rounds


def summarise(rounds_by_variant):
    """{variant: [rows of round 1, ...]} → [(shape, {column: median})], shape = (d, causal, seq).
    Columns: cudnn (over every variant's rounds) and VARIANT:METRIC for each path's attn/e2e."""
    table = {}
    for variant, rounds in rounds_by_variant.items():
        for rows in rounds:
            for row in rows:
                cells = table.setdefault((row["d"], row["causal"], row["seq"]), {})
                if row.get("cudnn"):
                    cells.setdefault("cudnn", []).append(row["cudnn"])
                for key, value in row.items():
                    if key.endswith(("-attn", "-e2e")) and value:
                        cells.setdefault(f"{variant}:{key}", []).append(value)
    return [(shape, {k: statistics.median(v) for k, v in cells.items()})
            for shape, cells in sorted(table.items(), key=lambda item: (-item[0][0], item[0][1:]))]


def main():
    out, names = sys.argv[1], sys.argv[2:]
    rounds = {name: load_rounds(out, name) for name in names}
    summary = summarise(rounds)
    if not summary:
        print("variants_summary: no rounds found")
        return
    columns = sorted({k for _, cells in summary for k in cells if k != "cudnn"},
                     key=lambda k: (k.split(":")[1], names.index(k.split(":")[0])))
    print(f"medians over {min(len(r) for r in rounds.values())} rounds (TOPS)")
    print(f"{'d':>3} {'causal':>6} {'seq':>6} | {'cudnn':>7} " +
          " ".join(f"{c:>{max(len(c), 7)}}" for c in columns))
    for (d, causal, seq), cells in summary:
        print(f"{d:>3} {str(causal):>6} {seq:>6} | {cells.get('cudnn', float('nan')):>7.0f} " +
              " ".join(f"{cells.get(c, float('nan')):>{max(len(c), 7)}.0f}" for c in columns))


if __name__ == "__main__":
    main()
