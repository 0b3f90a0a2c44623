"""cuDNN's FP8 attention (the cuDNN graph API's sdpa_fp8, through the nvidia-cudnn-frontend
package, which uses the cuDNN library torch loaded) as a peer for bench/sageattn_bench.py.

Per-tensor scaling, the way cuDNN defines its FP8 attention: Q, K and V in e4m3 with one float32
descale each, P rounded to e4m3 under a fixed scale, O written in e4m3 (cuDNN on Hopper writes
FP8 O only) with its own scale. The attention call times the kernel alone, on inputs already in
e4m3; `quantize` is what a caller holding fp16 tensors runs first, timed apart by the bench.
"""

import torch

E4M3_MAX = 448.0  # the largest finite e4m3 value


def load():
    """The cudnn module; ImportError says why it is missing (the package is not a dependency)."""
    import cudnn  # noqa: F401 - the nvidia-cudnn-frontend package

    return cudnn


def quantize(t):
    """(t in e4m3 scaled so that its largest magnitude is E4M3_MAX,
    the float32 descale [1,1,1,1])."""
    amax = t.abs().amax().float().clamp(min=1e-30)
    scale = E4M3_MAX / amax
    return (t * scale).to(torch.float8_e4m3fn), (1.0 / scale).reshape(1, 1, 1, 1)


_fused = None


def quantize_fused(t):
    """quantize, fused by torch.compile into a reduction and one scale-and-cast pass (what a
    caller who cares would run); quantize itself where Inductor cannot compile it."""
    global _fused
    if _fused is None:
        try:
            compiled = torch.compile(quantize, dynamic=True)
            compiled(t)
            _fused = compiled
        except Exception as e:  # noqa: BLE001 - no Triton, no compiler: the eager version
            print(
                "cuDNN FP8: quantizing with eager torch ops (torch.compile failed: "
                f"{str(e).splitlines()[0]})"
            )
            _fused = quantize
    return _fused(t)


class Attention:
    """One built cuDNN graph for e4m3 Q, K, V of fixed shapes ([batch, heads, seq, dim], HND,
    contiguous), causal or not; call with the quantized tensors and their descales."""

    def __init__(self, q8, k8, v8, causal, sm_scale):
        cudnn = load()
        e4m3, fp32 = cudnn.data_type.FP8_E4M3, cudnn.data_type.FLOAT
        self._handle = cudnn.create_handle()
        cudnn.set_stream(handle=self._handle, stream=torch.cuda.current_stream().cuda_stream)
        graph = cudnn.pygraph(
            io_data_type=e4m3,
            intermediate_data_type=fp32,
            compute_data_type=fp32,
            handle=self._handle,
        )
        tq, tk, tv = (
            graph.tensor(name=n, dim=list(t.shape), stride=list(t.stride()), data_type=e4m3)
            for n, t in (("q", q8), ("k", k8), ("v", v8))
        )
        scalar = dict(dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=fp32)
        names = ("descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o")
        scalars = {n: graph.tensor(name=n, **scalar) for n in names}
        o, _, amax_s, amax_o = graph.sdpa_fp8(
            q=tq,
            k=tk,
            v=tv,
            **scalars,
            is_inference=True,
            attn_scale=float(sm_scale),
            use_causal_mask=bool(causal),
            name="sdpa_fp8",
        )
        self.o8 = torch.empty(
            q8.shape[:3] + (v8.shape[3],), dtype=torch.float8_e4m3fn, device=q8.device
        )
        o.set_output(True).set_dim(list(self.o8.shape)).set_stride(
            list(self.o8.stride())
        ).set_data_type(e4m3)
        self._amax = [
            torch.empty(1, 1, 1, 1, dtype=torch.float32, device=q8.device) for _ in range(2)
        ]
        for t in (amax_s, amax_o):
            t.set_output(True).set_dim([1, 1, 1, 1]).set_stride([1, 1, 1, 1]).set_data_type(fp32)
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        graph.check_support()
        graph.build_plans()
        self._graph = graph
        self.workspace = torch.empty(
            graph.get_workspace_size(), dtype=torch.uint8, device=q8.device
        )
        # P is in [0, 1]: the fixed scale puts its largest value at the top of e4m3.
        one = lambda x: torch.full((1, 1, 1, 1), x, dtype=torch.float32, device=q8.device)  # noqa: E731
        self._pack = {
            tq: q8,
            tk: k8,
            tv: v8,
            o: self.o8,
            amax_s: self._amax[0],
            amax_o: self._amax[1],
            scalars["descale_s"]: one(1.0 / E4M3_MAX),
            scalars["scale_s"]: one(E4M3_MAX),
        }
        self._inputs = (tq, tk, tv)
        self._call_scalars = tuple(
            scalars[n] for n in ("descale_q", "descale_k", "descale_v", "scale_o")
        )

    def __call__(self, q8, k8, v8, descale_q, descale_k, descale_v, scale_o):
        """O in e4m3 (self.o8; O = o8 / scale_o). The tensors must have the shapes it was built
        for."""
        # The variant pack's keys are fixed: this call's tensors replace the last call's in place
        # (no new dict on the timed path).
        pack = self._pack
        pack.update(zip(self._inputs, (q8, k8, v8)))
        pack.update(zip(self._call_scalars, (descale_q, descale_k, descale_v, scale_o)))
        self._graph.execute(pack, self.workspace, handle=self._handle)
        return self.o8


def attention_fp16(q, k, v, causal, sm_scale):
    """A one-shot FP8 attention of fp16 inputs, returned in float32 (for accuracy checks): quantize,
    build, run, dequantize. O's scale: |O| <= max |V|, so E4M3_MAX / max |V| cannot overflow."""
    (q8, dq), (k8, dk), (v8, dv) = (quantize(t.contiguous()) for t in (q, k, v))
    scale_o = 1.0 / dv
    run = Attention(q8, k8, v8, causal, sm_scale)
    return run(q8, k8, v8, dq, dk, dv, scale_o).float() / scale_o
