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

    # Two CTAs on one SM, printed out of order; warpgroup 1 reaches each milestone later.
    def cta(n, entry):
        # entry, set_up +100, q +300, first0/1 +1000/+1100, loop_end0/1 +5000/+5200, end0/1 +5600/+5900
        offsets = [0, 100, 300, 1000, 1100, 5000, 5200, 5600, 5900]
        return f"sm90cta D=128 cta={n} sm=0 " + " ".join(str(entry + o) for o in offsets)
    ctas = trace_summary.parse_ctas("\n".join([cta(7, 20000), "noise", cta(3, 10000)]))
    assert list(ctas) == [128] and [c["entry"] for c in ctas[128]] == [10000, 20000]
    spans = trace_summary.cta_spans(ctas[128])
    expected = {"set-up (barriers, ones rows, sync)": 100, "Q's load (TMA) after set-up": 200,
                "first turn (Q·Kᵀ + softmax, no P·V)": 800, "the other turns": 4100,
                "epilogue (normalise, store O)": 700, "whole CTA (entry to end)": 5900}
    for name, cycles in expected.items():
        assert spans[name] == [cycles, cycles], (name, spans[name])
    assert spans["gap to the next CTA's entry"] == [20000 - 15900], spans
    print("trace_summary: ok")


if __name__ == "__main__":
    main()
