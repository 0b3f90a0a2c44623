#!/usr/bin/env python3
"""sharpness_model.py: its scale groups are the ones its docstring names, its INT8 rounding
stays within half a step, and on the kernels' own schemes it reproduces their measured cosines
(so that what it says of the schemes the kernels do not have can be trusted). Needs torch:
run with build/torch-venv/bin/python (ctest does)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sharpness_model as model  # noqa: E402


def main():
    ids = model.group_ids("thread_q", 32).tolist()
    assert ids[:16] == [0, 1, 2, 3, 4, 5, 6, 7] * 2 and ids[16] == 8, ids  # rows i and i + 8
    ids = model.group_ids("thread_k", 128).tolist()
    assert ids[:8] == [0, 0, 1, 1, 2, 2, 3, 3] and ids[64:66] == [4, 4], ids
    assert all(ids.count(g) == 16 for g in range(8)), ids  # 16 keys per thread per 64-key block
    assert model.group_ids("block", 130).tolist()[-3:] == [1, 2, 2]

    x = torch.randn(2, 64, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 5
    for kind in ("warp", "block", "token", "thread_q", "thread_k"):
        ids = model.group_ids(kind, 64)
        q = model.quantize(x, kind)
        for g in ids.unique():
            rows = ids == g
            step = x[:, rows].abs().amax(dim=(1, 2)) / 127  # per head
            err = (q[:, rows] - x[:, rows]).abs().amax(dim=(1, 2))
            assert (err <= step / 2 * (1 + 1e-12)).all(), (kind, int(g), err, step)
    # The residual term: error within half of the second, 127 times finer step.
    step = x.abs().amax(dim=-1).view(2, 4, 16).amax(dim=-1) / 127 / 127
    err = (model.quantize(x, "warp2") - x).abs().amax(dim=-1).view(2, 4, 16).amax(dim=-1)
    assert (err <= step / 2 * (1 + 1e-9)).all(), (err, step)

    rows = model.model([1, 8, 32])
    assert model.check(rows) <= 0, "the model no longer reproduces the kernels' measured cosines"
    # A scale's draw does not depend on the other scales asked for.
    assert model.model([8])[0]["cosine"] == rows[1]["cosine"]
    for r in rows:  # finer groups never lose to coarser ones by more than sampling noise
        c = r["cosine"]
        assert c["per_token Q and K"] >= c["per_warp Q, per_block K (sageattn)"] - 1e-4, r
        assert c["16-bit Q·Kᵀ"] > 0.99999, r
    print("sharpness_model_test: ok")


if __name__ == "__main__":
    main()
