#!/usr/bin/env python3
"""variants_summary.py on rounds whose medians are known, read back from files as the script
writes them."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import variants_summary  # noqa: E402


def row(d, causal, seq, cudnn, attn, e2e):
    return {"d": d, "causal": causal, "seq": seq, "batch": 1, "heads": 1, "flash": 1.0,
            "cudnn": cudnn, "fp8_sm90-attn": attn, "fp8_sm90-e2e": e2e}


def main():
    with tempfile.TemporaryDirectory() as out:
        # Variant a: attn 100, 300, 200 over three rounds (median 200); b: 10, 30, 20. Round 10
        # sorts after round 2 by number, not by name.
        for k, (a_attn, b_attn) in zip((1, 2, 10), ((100, 10), (300, 30), (200, 20))):
            for name, attn, cudnn in (("a", a_attn, 50 + k), ("b", b_attn, 60 + k)):
                rows = [row(128, False, 1024, cudnn, attn, attn / 2), row(64, True, 4096, None, attn, None)]
                with open(os.path.join(out, f"{name}-bench-r{k}.json"), "w") as f:
                    json.dump({"gpu": "test", "rows": rows}, f)
        rounds = {name: variants_summary.load_rounds(out, name) for name in ("a", "b")}
    assert [r[0]["fp8_sm90-attn"] for r in rounds["a"]] == [100, 300, 200], rounds["a"]
    summary = variants_summary.summarise(rounds)
    assert [shape for shape, _ in summary] == [(128, False, 1024), (64, True, 4096)], summary
    cells = dict(summary)[(128, False, 1024)]
    assert cells["a:fp8_sm90-attn"] == 200 and cells["b:fp8_sm90-attn"] == 20, cells
    assert cells["a:fp8_sm90-e2e"] == 100, cells
    assert cells["cudnn"] == 60.5, cells  # the median of 51, 52, 60, 61, 62, 70
    assert "cudnn" not in dict(summary)[(64, True, 4096)]  # no cuDNN figure: no column value
    assert "a:fp8_sm90-e2e" not in dict(summary)[(64, True, 4096)]
    print("variants_summary_test: ok")


if __name__ == "__main__":
    main()
