"""The benchmarks' one CUDA-event timer: a call's time as the median of `reps` timed calls after
`warmup` untimed ones, each between two CUDA events on the current stream (the GPU's own clock,
not the host's). Used by bench/sageattn_bench.py, kernels/tests/bench_*.py and
python/tests/compare_wheels.py."""

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
