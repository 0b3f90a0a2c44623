#!/usr/bin/env python3
"""Phase durations of the Hopper kernel's consumer warpgroups, from the "sm90trace" lines that a
build with -DSAGEATTN_SM90_TRACE=1 prints (SM clock stamps of one CTA's turns; see
attention_sm90.cuh). Runs anywhere:

  python3 kernels/tests/trace_summary.py trace.log [--skip 2]

Per warpgroup and phase: the median and mean cycles over the steady-state turns (the first
--skip turns and the last are left out), then how long each warpgroup waited for the other's
handover, and the period (turn start to next turn start).
"""
import argparse
import re
import statistics
import sys

# The kernel stamps at: turn requested, turn acquired, P·V landed, handed over, Q·Kᵀ landed,
# softmax done. Phase k runs from stamp k to stamp k+1 (the last to the next turn's stamp 0).
PHASES = ["wait for K/V and the turn", "P·V issue and wait", "merge, Q·Kᵀ issue, handover",
          "K scales, Q·Kᵀ wait", "softmax", "loop back"]
LINE = re.compile(r"sm90trace D=(\d+) blocks=(\d+) wg=(\d) turn=(\d+)((?: -?\d+){6})")


def parse(text):
    runs = {}  # (D, blocks) -> {wg: {turn: [6 stamps]}}
    for m in LINE.finditer(text):
        d, blocks, wg, turn = (int(x) for x in m.groups()[:4])
        runs.setdefault((d, blocks), {}).setdefault(wg, {})[turn] = [int(x) for x in m.group(5).split()]
    return runs


def stats(values):
    return (statistics.median(values), statistics.fmean(values)) if values else (float("nan"),) * 2


def phase_cycles(t, turns):
    """{phase: [cycles per turn]} for one warpgroup's stamps t = {turn: [6 stamps]}, plus the
    period (turn start to the next turn's start)."""
    out = {}
    for k, name in enumerate(PHASES):
        if k < 5:
            out[name] = [t[n][k + 1] - t[n][k] for n in turns if n in t]
        else:
            out[name] = [t[n + 1][0] - t[n][5] for n in turns if n in t and n + 1 in t]
    out["period"] = [t[n + 1][0] - t[n][0] for n in turns if n in t and n + 1 in t]
    return out


def summarize(d, blocks, wgs, skip):
    print(f"D={d}, {blocks} key blocks; cycles, median / mean over turns {skip}..{blocks - 1}")
    turns = range(skip, blocks)  # turn nb issues Q·Kᵀ(nb) and P·V(nb-1); all have both at >= 1
    for wg in sorted(wgs):
        print(f"  warpgroup {wg}:")
        for name, vals in phase_cycles(wgs[wg], turns).items():
            med, mean = stats(vals)
            print(f"    {name:30s} {med:7.0f} / {mean:7.0f}")
    if 0 in wgs and 1 in wgs:
        a, b = wgs[0], wgs[1]
        # Warpgroup 1's turn nb follows warpgroup 0's turn nb; warpgroup 0's turn nb+1 follows it.
        gap_b = [b[n][1] - a[n][3] for n in turns if n in a and n in b]
        gap_a = [a[n + 1][1] - b[n][3] for n in turns if n + 1 in a and n in b]
        print("  handover to turn acquired (the barrier's latency, or the data's wait):")
        print(f"    0 -> 1 {stats(gap_b)[0]:7.0f}   1 -> 0 {stats(gap_a)[0]:7.0f}")
        busy = [b[n][3] - b[n][1] + a[n + 1][3] - a[n + 1][1] for n in turns if n + 1 in a and n in b]
        print(f"  both turns per period (tensor-core bursts in series): {stats(busy)[0]:.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    parser.add_argument("--skip", type=int, default=2, help="first turns left out (pipeline fill)")
    args = parser.parse_args()
    with open(args.log, encoding="utf-8", errors="replace") as fp:
        runs = parse(fp.read())
    if not runs:
        sys.exit(f"{args.log}: no sm90trace lines (a build with -DSAGEATTN_SM90_TRACE=1 prints them)")
    for (d, blocks), wgs in sorted(runs.items()):
        summarize(d, blocks, wgs, args.skip)


if __name__ == "__main__":
    main()
