#!/usr/bin/env python3
"""Summarises what ncu_profile.sh left: pipe utilisation and the warps' stall reasons (raw
page), then where the warps spend their time in the SASS (source page): the code cut into
segments at every wait, barrier and wgmma, each with its share of the stall samples and its
top stall reasons. Runs anywhere (CSV only).

Usage: ncu_summary.py DIR/NAME   (reads NAME-raw.csv and NAME-sass.csv)
"""
import csv
import re
import sys
from collections import Counter

# A new segment starts at each of these: they are where a warp waits or hands work over.
SEGMENT_MARKS = re.compile(r"DEPBAR|BAR\.|WARPSYNC|GMMA|SYNCS|EXIT")


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def table(path):
    rows = list(csv.reader(open(path)))
    at = next(i for i, r in enumerate(rows) if r and r[0] in ("ID", "Address"))
    return rows[at], rows[at + 1:]


def summarise_raw(path):
    header, rows = table(path)
    values = dict(zip(header, rows[1]))  # rows[0] holds the units
    print(f"kernel time {values.get('gpu__time_duration.sum')} (ncu units)")
    for key in header:
        if re.fullmatch(r"(sm__inst_executed_pipe_\w+|smsp__issue_active|sm__pipe_tensor_cycles_active)"
                        r"\.avg\.pct_of_peak_sustained_active", key):
            if number(values[key]) >= 1:
                print(f"  {key.split('.')[0]:40s} {number(values[key]):5.1f}% of peak")
    stalls = {key[len("smsp__average_warps_issue_stalled_"):-len("_per_issue_active.ratio")]:
              number(values[key]) for key in header
              if key.startswith("smsp__average_warps_issue_stalled_")
              and key.endswith("_per_issue_active.ratio")}
    print("  stalls per issued instruction: " + ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(stalls.items(), key=lambda kv: -kv[1])[:8]))


def summarise_sass(path):
    header, rows = table(path)
    rows = [r for r in rows if len(r) == len(header)]
    samples = header.index("Warp Stall Sampling (All Samples)")
    executed = header.index("Instructions Executed")
    reasons = [i for i, h in enumerate(header) if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(number(r[samples]) for r in rows)
    segments, start = [], 0
    for k, row in enumerate(rows):
        if k > start and SEGMENT_MARKS.search(row[1]):
            segments.append((start, k))
            start = k
    segments.append((start, len(rows)))
    print(f"SASS: {len(rows)} instructions, {total:.0f} stall samples; segments with >= 1%:")
    for lo, hi in segments:
        share = sum(number(rows[k][samples]) for k in range(lo, hi))
        if share / total < 0.01:
            continue
        why = Counter()
        ops = Counter()
        for k in range(lo, hi):
            for i in reasons:
                why[header[i][len("stall_"):]] += number(rows[k][i])
            words = [w for w in rows[k][1].split() if not w.startswith("@")]
            ops[words[0].split(".")[0]] += number(rows[k][executed])
        top = ", ".join(f"{r} {v / share:.0%}" for r, v in why.most_common(3))
        mix = ", ".join(o for o, _ in ops.most_common(4))
        print(f"  [{lo:4d}-{hi - 1:4d}] {share / total:6.1%}  starts at {rows[lo][1].strip()[:44]:44s}"
              f" | {top} | {mix}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    summarise_raw(sys.argv[1] + "-raw.csv")
    summarise_sass(sys.argv[1] + "-sass.csv")


if __name__ == "__main__":
    main()
