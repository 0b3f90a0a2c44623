#!/usr/bin/env python3
"""trace_summary.py on synthetic sm90trace lines whose phase lengths are known."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_summary  # noqa: E402

# Phase lengths 10, 20, 30, 40, 50 cycles, then 60 back to the next turn: a period of 210.
LENGTHS = [10, 20, 30, 40, 50, 60]


def synthetic(wg, turns, start):
    lines, t = [], start
    for n in range(turns):
        stamps = []
        for length in LENGTHS:
            stamps.append(t)
            t += length
        lines.append(f"sm90trace D=128 blocks={turns - 1} wg={wg} turn={n} " + " ".join(map(str, stamps)))
    return lines


def main():
    text = "\n".join(["noise before", *synthetic(0, 6, 1000), *synthetic(1, 6, 1035), "after"])
    runs = trace_summary.parse(text)
    assert list(runs) == [(128, 5)], runs
    wgs = runs[(128, 5)]
    assert sorted(wgs) == [0, 1] and sorted(wgs[0]) == list(range(6))
    cycles = trace_summary.phase_cycles(wgs[0], range(2, 5))
    for name, length in zip(trace_summary.PHASES, LENGTHS):
        assert cycles[name] == [length] * 3, (name, cycles[name])
    assert cycles["period"] == [210] * 3, cycles["period"]
    # A log without trace lines is an error with a message, not a traceback.
    assert trace_summary.parse("no stamps here") == {}
    print("trace_summary: ok")


if __name__ == "__main__":
    main()
