"""The benchmarks' one CUDA-event timer: a call's time as the median of `reps` timed calls after
`warmup` untimed ones, each between two CUDA events on the current stream (the GPU's own clock,
not the host's). Used by bench/sageattn_bench.py, bench/mma_bench.py, bench/kernels/bench_*.py and
python/tests/compare_wheels.py. Beside it, what the prefill suites share: their shapes, and the
best of several round-robin rounds."""

from typing import Any, NamedTuple

import torch


def median_ms(fn, reps=20, warmup=5):
    """Milliseconds per call of `fn` (a callable that enqueues GPU work)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def best_of_rounds(calls, rounds):
    """{name: the best median (ms) over the rounds, or None where the call could not be made}.
    calls: {name: a zero-argument callable, or None for a method that does not take the inputs};
    every round visits every method in turn, so that a clock dip costs one round of one method."""
    best = {name: None for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            if fn is None:
                continue
            try:
                ms = median_ms(fn)
            except RuntimeError:  # an SDPA backend that does not take these inputs
                calls[name] = None
                continue
            best[name] = ms if best[name] is None else min(ms, best[name])
    return best


class PrefillShape(NamedTuple):
    d: int
    causal: bool
    seq: int
    batch: int
    heads: int
    q: Any
    k: Any
    v: Any
    flops: float  # 4·b·h·s²·d, halved for causal


def prefill_shapes(seqs, head_dims):
    """The prefill suites' calls: per head dim (4096/d heads), not causal then causal, per
    sequence length (b·s = 32k tokens), fresh fp16 HND inputs, freed before the next shape."""
    for d in head_dims:
        heads = max(1, 4096 // d)
        for causal in (False, True):
            for seq in seqs:
                b = max(1, 32768 // seq)
                q, k, v = (
                    torch.randn(b, heads, seq, d, device="cuda", dtype=torch.float16)
                    for _ in range(3)
                )
                flops = 4 * b * heads * seq * seq * d / (2 if causal else 1)
                yield PrefillShape(d, causal, seq, b, heads, q, k, v, flops)
                del q, k, v
                torch.cuda.empty_cache()
