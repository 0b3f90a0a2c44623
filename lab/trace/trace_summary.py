#!/usr/bin/env python3
"""Phase durations of the Hopper kernel's consumer warpgroups, from the "sm90trace" lines that a
build with -DSAGEATTN_SM90_TRACE=1 prints (SM clock stamps of one CTA's turns; see
attention_sm90.cuh). Runs anywhere:

  python3 lab/trace/trace_summary.py trace.log [--skip 2]

Per warpgroup and phase: the median and mean cycles over the steady-state turns (the first
--skip turns and the last are left out), then how long each warpgroup waited for the other's
handover, and the period (turn start to next turn start).

Then the CTA timeline ("sm90cta" lines: the milestones of every CTA that ran on one SM): where a
CTA's time goes outside its steady turns, and the gap from one CTA's end to the next one's start
on that SM (the launch of a new CTA).
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
# The CTA milestones, in the kernel's order (enum CtaStamp in attention_sm90.cuh).
CTA_STAMPS = ["entry", "set_up", "q", "first0", "first1", "loop_end0", "loop_end1", "end0", "end1"]
CTA_LINE = re.compile(r"sm90cta D=(\d+) cta=(\d+) sm=(\d+)((?: -?\d+){%d})" % len(CTA_STAMPS))
# The spans reported per CTA: name, from stamp, to stamp (the later warpgroup's where two).
CTA_SPANS = [
    ("set-up (barriers, ones rows, sync)", "entry", "set_up"),
    ("Q's load (TMA) after set-up", "set_up", "q"),
    ("first turn (Q·Kᵀ + softmax, no P·V)", "q", "first"),
    ("the other turns", "first", "loop_end"),
    ("epilogue (normalise, store O)", "loop_end", "end"),
]


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


def parse_ctas(text):
    """{D: [{stamp: cycles} for each CTA of the traced SM, in start order]}."""
    out = {}
    for m in CTA_LINE.finditer(text):
        stamps = dict(zip(CTA_STAMPS, (int(x) for x in m.group(4).split())))
        # Both warpgroups must be past a milestone for the CTA to be: take the later one.
        for name in ("first", "loop_end", "end"):
            stamps[name] = max(stamps[name + "0"], stamps[name + "1"])
        out.setdefault(int(m.group(1)), []).append(stamps)
    for ctas in out.values():
        ctas.sort(key=lambda c: c["entry"])
    return out


def cta_spans(ctas):
    """{span: [cycles per CTA]}, plus the gap from each CTA's end to the next one's entry."""
    out = {name: [c[b] - c[a] for c in ctas] for name, a, b in CTA_SPANS}
    out["whole CTA (entry to end)"] = [c["end"] - c["entry"] for c in ctas]
    out["gap to the next CTA's entry"] = [n["entry"] - c["end"] for c, n in zip(ctas, ctas[1:])]
    return out


def summarize_ctas(d, ctas):
    print(f"D={d}, CTA timeline of one SM ({len(ctas)} CTAs); cycles, median / mean")
    for name, vals in cta_spans(ctas).items():
        med, mean = stats(vals)
        print(f"    {name:38s} {med:8.0f} / {mean:8.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    parser.add_argument("--skip", type=int, default=2, help="first turns left out (pipeline fill)")
    args = parser.parse_args()
    with open(args.log, encoding="utf-8", errors="replace") as fp:
        text = fp.read()
    runs = parse(text)
    if not runs:
        sys.exit(f"{args.log}: no sm90trace lines (a build with -DSAGEATTN_SM90_TRACE=1 prints them)")
    for (d, blocks), wgs in sorted(runs.items()):
        summarize(d, blocks, wgs, args.skip)
    for d, ctas in sorted(parse_ctas(text).items()):
        summarize_ctas(d, ctas)


if __name__ == "__main__":
    main()
