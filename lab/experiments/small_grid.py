"""Non-causal square calls with few CTAs: sageattn's kernel (hand-over off) against torch's SDPA."""
import json, sys, torch
from sageattention import sageattn
sys.path.insert(0, "bench")  # run from the repository root
from sageattn_bench import _median_ms, _sdpa, _best_of_rounds
rows = []
for d, heads in ((128, 24), (128, 32), (64, 32), (64, 64)):
    for b in (1, 2, 4, 8):
        for s in (2048, 3072, 4096, 4608, 6144, 8192):
            q, k, v = (torch.randn(b, heads, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
            calls = {"kernel": lambda: sageattn(q, k, v, sdpa_for_short_queries=False),
                     "SDPA": _sdpa(None, q, k, v, False)}
            ms = _best_of_rounds(calls, 2)
            rows.append({"d": d, "heads": heads, "batch": b, "seq": s, "ms": ms})
            print(f"d={d:3} h={heads:2} b={b} s={s:5} | kernel {ms['kernel']*1e3:8.1f} us  SDPA {ms['SDPA']*1e3:8.1f} us"
                  f" | kernel/SDPA {ms['kernel']/ms['SDPA']:.2f}", flush=True)
json.dump(rows, open(sys.argv[1], "w"), indent=1)
