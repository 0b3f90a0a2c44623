"""What works without a GPU: import, the dispatch table, input validation, the fallback to
scaled_dot_product_attention (and strict mode), and the fake implementation torch.compile uses.
Run against the installed wheel (not the source tree) in CI."""

import math
import os
import warnings

import pytest
import torch
import torch.nn.functional as F

import sageattention
from sageattention import SageAttentionError, core, path_for_capability, plan, sageattn


def qkv(b=2, hq=4, hk=2, lq=17, lk=33, d=64, layout="HND", dtype=torch.float32, device="cpu"):
    def t(h, length):
        shape = (b, h, length, d) if layout == "HND" else (b, length, h, d)
        return torch.randn(shape, dtype=dtype, device=device)

    return t(hq, lq), t(hk, lk), t(hk, lk)


def test_imports_without_a_gpu():
    assert sageattention.__version__ != ""
    assert callable(sageattention.sageattn_qk_int8_pv_fp8_cuda_sm90)


def test_installed_from_a_wheel_with_its_compiled_operator():
    assert sageattention._ops.available(), sageattention._ops.LOAD_ERROR
    assert hasattr(torch.ops.sageattention, "attention")


@pytest.mark.parametrize(
    "cc, path",
    [
        ((7, 5), None),
        ((8, 0), "fp16"),
        ((8, 6), "fp16"),
        ((8, 9), "fp8"),
        ((9, 0), "fp8_sm90"),
        ((10, 0), "fp8"),
        ((12, 0), "fp8"),
    ],
)
def test_dispatch_table(cc, path):
    # The wheels under test are built with 9.0a (matrix.yaml default_archs): Hopper gets wgmma.
    assert path_for_capability(*cc) == path


@pytest.mark.parametrize(
    "seq_q, path", [(1, "fp16_sm90"), (8192, "fp16_sm90"), (8193, "fp8_sm90"), (32768, "fp8_sm90")]
)
def test_hopper_takes_the_16bit_kernel_for_short_queries(seq_q, path):
    # Faster end to end there (no V quantization) and more accurate
    # (core.HOPPER_PV16_MAX_QUERY_LEN).
    assert path_for_capability(9, 0, seq_q) == path
    assert path_for_capability(8, 9, seq_q) == "fp8"  # only Hopper has the 16-bit wgmma kernel


@pytest.mark.parametrize(
    "cc, path", [((8, 0), "fp16"), ((8, 9), "fp16"), ((9, 0), "fp16_sm90"), ((12, 0), "fp16")]
)
def test_head_dims_above_128_take_16bit_pv(cc, path):
    # FP8 P·V stops at core.FP8_PV_MAX_HEAD_DIM (the kernels' kFp8PvMaxHeadDim); at 129-256 (padded
    # to 256) every GPU runs the 16-bit P·V kernel, at any query length.
    for seq_q in (None, 1, 1 << 20):
        assert path_for_capability(*cc, seq_q, 256) == path
        assert path_for_capability(*cc, seq_q, 192) == path
    assert path_for_capability(*cc, None, 128) == path_for_capability(*cc)


def test_head_dims_per_path():
    # sageattn::path_supports_head_dim: FP8 P·V up to 128, 96 and 192 on the Hopper kernel only;
    # the call pads to the next of these (80 -> 96 on fp16_sm90, 128 elsewhere; 160 -> 192 or 256).
    assert core.head_dims_for("fp16_sm90") == (64, 96, 128, 192, 256)
    assert core.head_dims_for("fp16") == (64, 128, 256)
    assert core.head_dims_for("fp8") == core.head_dims_for("fp8_sm90") == (64, 128)


def plan_of(
    cc,
    path=None,
    *,
    seq_q=4096,
    seq_k=4096,
    heads_q=8,
    heads_kv=8,
    head_dim=128,
    is_causal=False,
    return_lse=False,
    short_queries=False,
    strict=None,
    pv_accum_dtype=None,
    facts=None,
):
    return plan.plan_call(
        "sageattn",
        *cc,
        seq_q=seq_q,
        seq_k=seq_k,
        heads_q=heads_q,
        heads_kv=heads_kv,
        head_dim=head_dim,
        is_causal=is_causal,
        return_lse=return_lse,
        path=path,
        pv_accum_dtype=pv_accum_dtype,
        short_queries=short_queries,
        strict=strict,
        instead="sageattn picks a path this GPU runs",
        facts=facts,
    )


@pytest.mark.parametrize("cc", [(8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0), (12, 1)])
def test_sageattn_sums_blocks_in_fp16_where_geforce_doubles_the_rate(cc):
    for seq_q, head_dim in [(4096, 128), (4096, 64), (16384, 256), (128, 128)]:
        p = plan_of(cc, seq_q=seq_q, seq_k=seq_q, head_dim=head_dim)
        fp16_block = (
            p.path in ("fp8", "fp16")
            and cc in [(8, 6), (8, 9), (12, 0), (12, 1)]
            and p.padded_head_dim <= 128
        )
        assert p.accumulation == ("fp16_block" if fp16_block else "fp32"), (cc, p)
        assert p.accumulation in plan._manifest.PATH_ACCUMULATIONS[p.path].values()


def test_the_accumulation_asked_for_is_the_one_planned():
    core._warned.clear()
    assert plan_of((8, 9), "fp8", pv_accum_dtype="fp32+fp16").accumulation == "fp16_block"
    assert plan_of((8, 9), "fp8", pv_accum_dtype="fp32+fp32").accumulation == "fp32"
    assert plan_of((8, 9), "fp8").accumulation == "fp32"  # the path's default
    assert plan_of((12, 0), "fp8", pv_accum_dtype="fp32+fp16").accumulation == "fp16_block"
    # Where the call moves to 16-bit P·V (a head dim FP8 does not take), the same summing where
    # that path has it at that head dim, else that path's default.
    with pytest.warns(UserWarning):
        p = plan_of((8, 9), "fp8", head_dim=256, pv_accum_dtype="fp32+fp16")
    assert (p.path, p.accumulation) == ("fp16", "fp32")  # (the fp16 path's stop at d=128)
    core._warned.clear()
    with pytest.warns(UserWarning):
        p = plan_of((8, 9), "fp8", head_dim=256, pv_accum_dtype="fp32+fp32")
    assert (p.path, p.accumulation) == ("fp16", "fp32")
    # The 16-bit mma.sync path's FP16 block sums, under upstream's name.
    assert plan_of((8, 6), "fp16", pv_accum_dtype="fp16+fp32").accumulation == "fp16_block"
    assert plan_of((8, 0), "fp16", pv_accum_dtype="fp32").accumulation == "fp32"
    # A mode the path lacks, before the GPU's capability is looked at.
    with pytest.raises(SageAttentionError, match="'fp32\\+fp16' is not one the fp16 path has"):
        plan_of((8, 9), "fp16", pv_accum_dtype="fp32+fp16")
    with pytest.raises(SageAttentionError, match="'fp16' is not one the fp16 path has"):
        plan_of((8, 6), "fp16", pv_accum_dtype="fp16")
    # A mode built for some of the path's head dims: refused at the others, naming those.
    with pytest.raises(SageAttentionError, match="'fp16\\+fp32' at head dims 64, 128, not 256"):
        plan_of((8, 6), "fp16", head_dim=256, pv_accum_dtype="fp16+fp32")
    assert plan_of((8, 6), "fp16", head_dim=200).accumulation == "fp32"  # padded to 256
    with pytest.raises(SageAttentionError, match="fp8 path cannot run on compute capability 8.0"):
        plan_of((8, 0), "fp8", pv_accum_dtype="fp32+fp16")


def test_fp8_paths_above_128_run_16bit_pv_with_one_warning():
    core._warned.clear()
    with pytest.warns(
        UserWarning,
        match=r"FP8 P·V \(fp8_sm90\) takes head dims up to 128; head_dim 256 runs "
        r"with 16-bit P·V \(fp16_sm90\)",
    ):
        assert plan_of((9, 0), "fp8_sm90", head_dim=256).path == "fp16_sm90"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per cause
        assert plan_of((9, 0), "fp8_sm90", head_dim=256).path == "fp16_sm90"
        assert plan_of((8, 9), "fp8", head_dim=128).path == "fp8"
        assert plan_of((8, 0), "fp16", head_dim=256).path == "fp16"
    with pytest.raises(SageAttentionError, match="the fp16 path \\(16-bit P·V\\) takes up to 256"):
        plan_of((8, 9), "fp8", head_dim=256, strict=True)


def test_a_path_the_gpu_cannot_run_is_refused_with_what_to_do():
    for cc, path, why in [
        ((8, 0), "fp8", "FP8 P·V needs compute capability 8.9 or newer"),
        ((8, 9), "fp8_sm90", "the Hopper kernel runs on compute capability 9.0 only"),
        ((12, 0), "fp16_sm90", "the Hopper kernel runs on compute capability 9.0 only"),
    ]:
        with pytest.raises(SageAttentionError) as error:
            plan_of(cc, path)
        assert str(error.value) == (
            f"sageattn: the {path} path cannot run on compute capability {cc[0]}.{cc[1]}: {why}; "
            "sageattn picks a path this GPU runs"
        )


CAPABILITIES = [(8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1)]


@pytest.mark.parametrize("cc", CAPABILITIES)
def test_every_plan_runs_where_it_was_made(cc):
    # Over every size class the rules tell apart: the plan's path runs on the GPU and takes the
    # padded head dim (the next one at or above the call's), and the heads go in slices exactly
    # when one call could not hold them; sageattn's own choice never needs a warning.
    core._warned.clear()
    lengths = (1, 2, 128, 129, 1024, 1025, 3072, 3073, 4096, 4097, 8192, 8193, 1 << 20)
    head_dims = (1, 63, 64, 65, 80, 96, 97, 128, 129, 160, 192, 193, 255, 256)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seq_q in lengths:
            for head_dim in head_dims:
                for heads_q in (1, 8, core.MAX_QUERY_HEADS, core.MAX_QUERY_HEADS + 1):
                    p = plan_of(
                        cc, seq_q=seq_q, seq_k=seq_q, heads_q=heads_q, heads_kv=1, head_dim=head_dim
                    )
                    assert not p.sdpa
                    assert core.capability_gap(p.path, *cc, True) == "none", (cc, seq_q, p)
                    assert p.padded_head_dim == min(
                        d for d in core.head_dims_for(p.path) if d >= head_dim
                    )
                    assert p.sliced == (heads_q > core.MAX_QUERY_HEADS)


@pytest.mark.parametrize("cc", CAPABILITIES)
def test_the_short_query_hand_over_is_the_rule_and_comes_first(cc):
    shapes = [(1, 8192), (128, 8192), (1024, 1024), (3072, 3072), (4096, 4096), (200, 100)]
    for seq_q, seq_k in shapes:
        for is_causal in (False, True):
            for gqa in (False, True):
                expected = core.uses_sdpa_for_short_queries(seq_q, seq_k, is_causal, False, gqa)
                p = plan_of(
                    cc,
                    seq_q=seq_q,
                    seq_k=seq_k,
                    heads_kv=4 if gqa else 8,
                    is_causal=is_causal,
                    short_queries=None,
                )
                assert p.sdpa == expected
                # A per-path function (short_queries False) always runs its kernel, and so does
                # a call with return_lse, which SDPA does not give.
                assert not plan_of(cc, seq_q=seq_q, seq_k=seq_k, is_causal=is_causal).sdpa
                assert not plan_of(
                    cc,
                    seq_q=seq_q,
                    seq_k=seq_k,
                    is_causal=is_causal,
                    return_lse=True,
                    short_queries=None,
                ).sdpa


@pytest.mark.parametrize("cc", [(7, 5), *CAPABILITIES, (13, 0)])
def test_python_and_the_library_pick_the_same_path(cc):
    # plan.path_for_capability is Python (torch.compile traces it; no op call inside sageattn),
    # the library has its own rule (sageattn::default_pv_path): they must not drift apart, at any
    # query length or head dim either side of the rule's bounds.
    names = {number: name for name, number in core._PATHS.items()}
    for seq_q in (
        None,
        1,
        4096,
        core.HOPPER_PV16_MAX_QUERY_LEN,
        core.HOPPER_PV16_MAX_QUERY_LEN + 1,
        1 << 20,
        1 << 40,
    ):
        for head_dim in (None, 64, 96, core.FP8_PV_MAX_HEAD_DIM, core.FP8_PV_MAX_HEAD_DIM + 1, 256):
            python = path_for_capability(*cc, seq_q, head_dim)
            library = torch.ops.sageattention.default_pv_path(
                *cc, 0 if seq_q is None else seq_q, 0 if head_dim is None else head_dim
            )
            if python is not None:  # below sm80 the library has no kernel; Python says so
                assert python == names[library], (cc, seq_q, head_dim)


def test_the_library_reports_its_hopper_kernel():
    assert torch.ops.sageattention.has_sm90a() is True


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda q, k, v: (q[0], k, v), "q must be 4-D [batch, heads, seq, head_dim]"),
        (lambda q, k, v: (q, k[:, :1], v), "k and v must have the same heads and length"),
        (lambda q, k, v: (q, k.double(), v), "q, k, v must have one dtype"),
        (lambda q, k, v: (q[:1], k, v), "batch sizes differ"),
        (lambda q, k, v: (q[..., :32], k, v), "head dims differ"),
        (
            lambda q, k, v: (q[:, :3], k, v),
            "query heads (3) must be a multiple of key/value heads (2)",
        ),
        (lambda q, k, v: (q[:, :, :0], k, v), "q is empty"),
    ],
)
def test_validation_says_what_is_wrong(change, message):
    q, k, v = change(*qkv())
    with pytest.raises(
        SageAttentionError,
        match=message.replace("(", r"\(")
        .replace(")", r"\)")
        .replace("[", r"\[")
        .replace("]", r"\]"),
    ):
        sageattn(q, k, v)


def test_unknown_layout_and_options():
    q, k, v = qkv()
    with pytest.raises(SageAttentionError, match="tensor_layout must be 'HND' or 'NHD'"):
        sageattn(q, k, v, tensor_layout="BHSD")
    with pytest.raises(
        SageAttentionError,
        match="pv_accum_dtype 'fp16' is not one the fp16 path has; it has: 'fp32', 'fp16\\+fp32'$",
    ):
        sageattention.sageattn_qk_int8_pv_fp16_cuda(q, k, v, pv_accum_dtype="fp16")
    with pytest.raises(
        SageAttentionError,
        match="pv_accum_dtype 'fp32' is not one the fp8 path has; "
        "it has: 'fp32\\+fp32', 'fp32\\+fp16'$",
    ):
        sageattention.sageattn_qk_int8_pv_fp8_cuda(q, k, v, pv_accum_dtype="fp32")
    with pytest.raises(
        SageAttentionError, match="not one the fp8_sm90 path has; it has: 'fp32\\+fp32'$"
    ):
        sageattention.sageattn_qk_int8_pv_fp8_cuda_sm90(q, k, v, pv_accum_dtype="fp32+fp16")
    with pytest.raises(
        SageAttentionError, match="qk_quant_gran must be.*'per_thread' is not built"
    ):
        sageattention.sageattn_qk_int8_pv_fp8_cuda(q, k, v, qk_quant_gran="per_thread")
    with pytest.raises(SageAttentionError, match="not 'per_row'$"):
        sageattention.sageattn_qk_int8_pv_fp8_cuda(q, k, v, qk_quant_gran="per_row")


def reference(q, k, v, layout, causal):
    if layout == "NHD":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    return o.transpose(1, 2) if layout == "NHD" else o


@pytest.mark.parametrize("layout", ["HND", "NHD"])
@pytest.mark.parametrize("causal", [False, True])
def test_cpu_tensors_fall_back_to_sdpa_with_one_warning(layout, causal):
    core._warned.clear()
    q, k, v = qkv(layout=layout, lq=33, lk=33)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out1 = sageattn(q, k, v, tensor_layout=layout, is_causal=causal)
        sageattn(q, k, v, tensor_layout=layout, is_causal=causal)
    messages = [str(w.message) for w in caught]
    assert (
        len(messages) == 1 and "falling back to torch scaled_dot_product_attention" in messages[0]
    )
    torch.testing.assert_close(out1, reference(q, k, v, layout, causal))


def test_fallback_lse_is_the_logsumexp():
    q, k, v = qkv(hq=2, hk=2, lq=5, lk=9)
    out, lse = sageattn(q, k, v, return_lse=True)
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    torch.testing.assert_close(lse, torch.logsumexp(s, dim=-1))
    torch.testing.assert_close(out, reference(q, k, v, "HND", False))


def test_strict_mode_raises_instead_of_falling_back(monkeypatch):
    q, k, v = qkv()
    # (On a machine with a GPU the reason names the tensors' device instead.)
    with pytest.raises(
        SageAttentionError,
        match="cannot run the SageAttention kernels on the tensors are on (the CPU|cpu)",
    ):
        sageattn(q, k, v, strict=True)
    monkeypatch.setenv("SAGEATTENTION_STRICT", "1")
    with pytest.raises(SageAttentionError, match="SAGEATTENTION_STRICT=0"):
        sageattn(q, k, v)


def test_sharp_threshold_is_checked_before_anything_runs():
    # The sharp-tile guard's threshold: a number of logits, None (off); the op gets 0 for None.
    assert core.sharp_threshold_value(None) == 0.0
    assert core.sharp_threshold_value(100) == 100.0
    assert core.sharp_threshold_value(float("inf")) == float("inf")
    q, k, v = qkv()
    for bad in (-1.0, float("nan"), "100", True):
        with pytest.raises(
            SageAttentionError, match="sharp_threshold must be a non-negative number"
        ):
            sageattn(q, k, v, sharp_threshold=bad)
        with pytest.raises(SageAttentionError, match="sharp_threshold"):
            sageattention.sageattn_varlen(
                q[0].transpose(0, 1),
                k[0].transpose(0, 1),
                v[0].transpose(0, 1),
                torch.tensor([0, 17]),
                torch.tensor([0, 33]),
                17,
                33,
                sharp_threshold=bad,
            )


def test_fake_implementation_gives_shapes_for_torch_compile():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q = torch.empty(2, 8, 17, 128, dtype=torch.float16, device="cuda")
        k = torch.empty(2, 2, 40, 128, dtype=torch.float16, device="cuda")
        o, lse = torch.ops.sageattention.attention(
            q, k, k, 0, True, 0.1, 0, 0, 1, 0, True, 100.0, True
        )
        assert o.shape == q.shape and o.dtype == torch.float16
        assert lse.shape == (2, 8, 17) and lse.dtype == torch.float32
        q_nhd = torch.empty(2, 17, 8, 64, dtype=torch.bfloat16, device="cuda")
        k_nhd = torch.empty(2, 40, 2, 64, dtype=torch.bfloat16, device="cuda")
        o, lse = torch.ops.sageattention.attention(
            q_nhd, k_nhd, k_nhd, 1, False, 0.1, 1, 1, 1, 0, True, 100.0, False
        )
        assert o.shape == q_nhd.shape and lse.numel() == 0


def test_torch_compile_fullgraph_traces_the_operator():
    # Dynamo and AOT autograd trace the operator through its fake implementation (no graph
    # break); the compiled graph then runs on meta tensors, so no GPU is needed.
    def f(q, k, v):
        o, _ = torch.ops.sageattention.attention(
            q, k, v, 0, True, 0.1, 0, 0, 1, 0, True, 100.0, False
        )
        return o * 2

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    q = torch.empty(2, 8, 17, 128, dtype=torch.float16, device="meta")
    k = torch.empty(2, 2, 40, 128, dtype=torch.float16, device="meta")
    out = compiled(q, k, k)
    assert out.shape == q.shape and out.dtype == torch.float16 and out.device.type == "meta"


def test_a_library_that_cannot_load_falls_back_with_one_warning(tmp_path):
    # A real load failure: a copy of the installed package whose _kernels.so is not a library.
    # Importing it must not fail; sageattn falls back with one warning that names the cause, and
    # strict mode raises instead.
    import shutil
    import subprocess
    import sys

    package = tmp_path / "sageattention"
    shutil.copytree(os.path.dirname(sageattention.__file__), package)
    (package / "_kernels.so").write_bytes(b"not an ELF file")
    script = (
        "import warnings, torch, sageattention\n"
        "from sageattention import sageattn, SageAttentionError\n"
        "q = torch.randn(1, 2, 8, 64)\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    sageattn(q, q, q); sageattn(q, q, q)\n"
        "print(len(caught), caught[0].message if caught else '')\n"
        "try:\n"
        "    sageattn(q, q, q, strict=True)\n"
        "except SageAttentionError as e:\n"
        "    print('strict:', e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(tmp_path)),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("1 sageattn: falling back") and "could not be loaded" in lines[0]
    assert lines[1].startswith("strict:") and "could not be loaded" in lines[1]


@pytest.mark.parametrize(
    "heads_q, heads_kv",
    [(65544, 8), (65544, 65544), (70000, 1), (140000, 2), (3 * 65535, 3), (65536, 2)],
)
def test_head_slices_cover_every_head_with_its_kv_head(heads_q, heads_kv):
    # More query heads than the kernels' grid takes go in slices: each at most MAX_QUERY_HEADS,
    # and inside each the library's own GQA rule (query head i reads KV head i // (n // kv_n))
    # must pick the KV head the whole call would have.
    group = heads_q // heads_kv
    covered = 0
    for first, n, kv_first, kv_n in core._head_slices(heads_q, heads_kv):
        assert first == covered and 0 < n <= core.MAX_QUERY_HEADS and n % kv_n == 0
        for i in (0, n // 2, n - 1):
            assert kv_first + i // (n // kv_n) == (first + i) // group
        covered += n
    assert covered == heads_q


def test_rows_aligned_says_when_the_kernels_need_a_copy():
    base = torch.randn(2, 4, 10, 136)
    assert core._rows_aligned(base[..., :128])  # row stride 136: a multiple of 8
    assert not core._rows_aligned(base[..., 4:132])  # rows start 8 bytes in
    assert not core._rows_aligned(torch.randn(2, 4, 10, 129)[..., :128])  # row stride 129
    assert not core._rows_aligned(torch.randn(2, 4, 128, 10).transpose(-1, -2))  # last dim strided
    assert core._rows_aligned(torch.randn(2 * 4 * 10 * 64 + 8)[8:].view(2, 4, 10, 64))


def bottom_right_reference(q, k, v):
    """Causal attention aligned bottom-right, in float64: query i of lq sees keys up to
    i + lk - lq; a row that sees no key is zero."""
    q, k, v = (t.double() for t in (q, k, v))
    k, v = (t.repeat_interleave(q.shape[1] // k.shape[1], dim=1) for t in (k, v))
    lq, lk = q.shape[2], k.shape[2]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    s = s.masked_fill(~torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq), float("-inf"))
    return (torch.softmax(s, dim=-1).nan_to_num(0.0) @ v).float()


@pytest.mark.parametrize("lq,lk", [(1, 40), (7, 40), (40, 7), (40, 40)])
def test_fallback_causal_mask_is_bottom_right_as_the_kernels_apply_it(lq, lk):
    # SDPA's own is_causal is aligned top-left: with lq != lk the fallback must not pass it on.
    q, k, v = qkv(lq=lq, lk=lk)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = sageattn(q, k, v, is_causal=True)
    torch.testing.assert_close(out, bottom_right_reference(q, k, v), atol=1e-5, rtol=1e-5)
    if lq > lk:
        assert (out[:, :, : lq - lk] == 0).all()


def test_short_query_rule(monkeypatch):
    rule = core.uses_sdpa_for_short_queries
    monkeypatch.delenv("SAGEATTENTION_SDPA_SHORT_QUERIES", raising=False)
    # No mask: few queries against any keys, or a short call.
    assert rule(1, 32768, False, False) and rule(plan.SDPA_MAX_QUERY_LEN, 32768, False, False)
    assert not rule(plan.SDPA_MAX_QUERY_LEN + 1, 32768, False, False)
    assert rule(plan.SDPA_MAX_SHORT_LEN, plan.SDPA_MAX_SHORT_LEN, False, False)
    assert not rule(plan.SDPA_MAX_SHORT_LEN, plan.SDPA_MAX_SHORT_LEN + 1, False, False)
    # Causal: square calls up to their limit; fewer queries than keys only few and MHA.
    assert rule(plan.SDPA_MAX_CAUSAL_SHORT_LEN, plan.SDPA_MAX_CAUSAL_SHORT_LEN, True, False)
    assert not rule(
        2 * plan.SDPA_MAX_CAUSAL_SHORT_LEN, 2 * plan.SDPA_MAX_CAUSAL_SHORT_LEN, True, False
    )
    limit = plan.SDPA_MAX_CAUSAL_QUERY_LEN
    assert rule(limit, 8192, True, False) and not rule(limit + 1, 8192, True, False)
    assert not rule(16, 8192, True, False, gqa=True), "torch repeats K and V for causal GQA"
    assert rule(1, 8192, True, False, gqa=True), "one query: the causal mask changes nothing"
    assert not rule(16, 8, True, False), "rows with no key to see: the kernel writes zeros"
    assert not rule(1, 32768, False, True), "SDPA returns no log-sum-exp: the kernel does"
    assert not rule(1, 32768, False, False, sdpa_for_short_queries=False)
    monkeypatch.setenv("SAGEATTENTION_SDPA_SHORT_QUERIES", "0")
    assert not rule(1, 32768, False, False)
    assert rule(1, 32768, False, False, sdpa_for_short_queries=True)


def _facts(**changes):
    base = plan.CallFacts(
        load_error=None,
        device="cuda:0",
        cuda_available=True,
        dtype="torch.float16",
        sixteen_bit=True,
        has_mask=False,
        dropout_p=0.0,
    )
    return base._replace(**changes)


@pytest.mark.parametrize(
    "changes, cc, head_dim, reason",
    [
        (dict(load_error="libcudart.so.13: cannot open"), (9, 0), 128, "could not be loaded"),
        (dict(device="cpu", cuda_available=False), (None, None), 128, "on the CPU"),
        (dict(device="meta"), (None, None), 128, "on meta, not a CUDA device"),
        (dict(dtype="torch.float32", sixteen_bit=False), (9, 0), 128, "dtype torch.float32"),
        ({}, (9, 0), 512, "head_dim 512"),
        (dict(has_mask=True), (9, 0), 128, "attn_mask"),
        (dict(dropout_p=0.1), (9, 0), 128, "dropout"),
        ({}, (7, 5), 128, "compute capability 7.5"),
        # The first reason wins: a library that does not load, whatever else.
        (
            dict(load_error="x", device="cpu", has_mask=True),
            (None, None),
            128,
            "could not be loaded",
        ),
    ],
)
def test_plan_call_decides_the_fallback_first_with_its_reason(changes, cc, head_dim, reason):
    # (On 7.5 a path is asked for: one the GPU cannot run raises, but only after the fallback.)
    p = plan_of(cc, "fp8" if cc == (7, 5) else None, head_dim=head_dim, facts=_facts(**changes))
    assert p.sdpa and p.path is None and reason in p.fallback, p


def test_plan_call_with_facts_that_fit_plans_the_kernel():
    p = plan_of((9, 0), facts=_facts())
    assert not p.sdpa and p.fallback is None and p.path is not None
