"""sageattn_varlen on a CUDA GPU: packed batches of mixed lengths (0, 1, 17, 1000, 4097) against
float32 SDPA of each sequence alone, causal (bottom-right per sequence), GQA, fp16 and bf16, the
LSE, every P·V path this GPU runs, padded head dims, equal-length batches against the dense call,
torch.compile(fullgraph=True), CUDA graph capture, and offsets given on the CPU. Run on the GPU
machine: python -m pytest -m gpu python/tests"""

import itertools

import pytest
import torch
import torch.nn.functional as F

import sageattention
from sageattention import sageattn, sageattn_varlen

pytestmark = pytest.mark.gpu
REL_L1 = {"fp16": 0.03, "fp16_sm90": 0.03, "fp8": 0.045, "fp8_sm90": 0.045, None: 0.045}


def available_paths():
    if not torch.cuda.is_available():
        return []
    cc = torch.cuda.get_device_capability()
    paths = ["fp16"] + (["fp8"] if cc >= (8, 9) else [])
    if cc == (9, 0) and sageattention._ops.HAS_SM90A:
        paths += ["fp8_sm90", "fp16_sm90"]
    return paths


def packed(lengths, heads, d, dtype, outlier_seq=None):
    parts = []
    for i, n in enumerate(lengths):
        x = torch.randn(n, heads, d, device="cuda")
        if i == outlier_seq:
            x = x + 10 * torch.randn(1, 1, d, device="cuda")
        parts.append(x)
    return torch.cat(parts).to(dtype)


def offsets(lengths, device="cuda"):
    return torch.tensor([0] + list(itertools.accumulate(lengths)), dtype=torch.int32, device=device)


def reference(q, k, v, lens_q, lens_k, causal):
    """float32 SDPA per sequence ([total, heads, d] in and out), bottom-right causal; rows that
    see no key are zeros."""
    out = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    for (q0, q1), (k0, k1) in zip(
        itertools.pairwise(offsets(lens_q).tolist()), itertools.pairwise(offsets(lens_k).tolist())
    ):
        if q1 == q0 or k1 == k0:
            continue
        qs, ks, vs = (
            t.transpose(0, 1).unsqueeze(0).float() for t in (q[q0:q1], k[k0:k1], v[k0:k1])
        )
        mask = torch.ones(q1 - q0, k1 - k0, dtype=torch.bool, device=q.device).tril(
            k1 - k0 - (q1 - q0)
        )
        s = (qs @ ks.repeat_interleave(qs.shape[1] // ks.shape[1], 1).transpose(-1, -2)) / qs.shape[
            -1
        ] ** 0.5
        if causal:
            s = s.masked_fill(~mask, float("-inf"))
        p = torch.softmax(s, -1).nan_to_num(0.0)
        out[q0:q1] = (p @ vs.repeat_interleave(qs.shape[1] // ks.shape[1], 1))[0].transpose(0, 1)
    return out


def check(out, ref, bar):
    a, r = out.float().flatten(), ref.flatten()
    cos = (a @ r / (a.norm() * r.norm())).item()
    rel = ((a - r).abs().sum() / r.abs().sum()).item()
    assert torch.isfinite(out).all()
    assert cos >= 0.999 and rel <= bar, (cos, rel)


LENGTHS = [
    ([17, 0, 1000, 1, 4097], [17, 0, 1000, 1, 4097]),
    ([1, 1000, 0, 17, 300], [4097, 17, 5, 0, 300]),
]


@pytest.mark.parametrize("lens_q, lens_k", LENGTHS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("heads", [(8, 8), (8, 2)])
def test_varlen_against_each_sequence_alone(lens_q, lens_k, causal, dtype, heads):
    q = packed(lens_q, heads[0], 128, dtype)
    k = packed(lens_k, heads[1], 128, dtype, outlier_seq=lens_k.index(max(lens_k)))
    v = packed(lens_k, heads[1], 128, dtype)
    out = sageattn_varlen(
        q, k, v, offsets(lens_q), offsets(lens_k), max(lens_q), max(lens_k), is_causal=causal
    )
    assert out.shape == q.shape and out.dtype == dtype
    ref = reference(q, k, v, lens_q, lens_k, causal)
    check(out, ref, REL_L1[None])
    # Every sequence on its own too: a short one lost inside the long one's error would pass above.
    for q0, q1 in itertools.pairwise(offsets(lens_q).tolist()):
        if q1 > q0 and ref[q0:q1].abs().sum() > 0:
            check(out[q0:q1], ref[q0:q1], REL_L1[None])


@pytest.mark.parametrize("path", available_paths())
def test_every_path(path):
    lens_q, lens_k = [300, 0, 17, 1000], [700, 3, 17, 1000]
    q, k, v = (
        packed(lens_q, 8, 64, torch.float16),
        packed(lens_k, 4, 64, torch.float16, 3),
        packed(lens_k, 4, 64, torch.float16),
    )
    for causal in (False, True):
        out = sageattn_varlen(
            q, k, v, offsets(lens_q), offsets(lens_k), 1000, 1000, is_causal=causal, pv_path=path
        )
        check(out, reference(q, k, v, lens_q, lens_k, causal), REL_L1[path])


def test_lse_is_per_sequence():
    lens_q, lens_k = [5, 100, 1], [300, 100, 2000]
    q, k, v = (
        packed(lens_q, 4, 64, torch.float16),
        packed(lens_k, 2, 64, torch.float16, 0),
        packed(lens_k, 2, 64, torch.float16),
    )
    out, lse = sageattn_varlen(
        q, k, v, offsets(lens_q), offsets(lens_k), 100, 2000, is_causal=True, return_lse=True
    )
    assert lse.shape == (4, 106) and lse.dtype == torch.float32
    for (q0, q1), (k0, k1) in zip(
        itertools.pairwise([0, 5, 105, 106]), itertools.pairwise([0, 300, 400, 2400])
    ):
        s = (
            q[q0:q1].float().transpose(0, 1)
            @ k[k0:k1].float().repeat_interleave(2, 1).permute(1, 2, 0)
            / 8
        )
        mask = torch.ones(q1 - q0, k1 - k0, dtype=torch.bool, device="cuda").tril(
            k1 - k0 - (q1 - q0)
        )
        ref = torch.logsumexp(s.masked_fill(~mask, float("-inf")), -1)
        assert (lse[:, q0:q1] - ref).abs().max().item() < 0.08


def test_equal_lengths_match_the_dense_call():
    # Three sequences of 300: the varlen kernels and the dense ones compute the same thing.
    q, k, v = (torch.randn(3, 300, 8, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    dense = sageattn(q, k, v, tensor_layout="NHD", is_causal=True, sdpa_for_short_queries=False)
    packed_out = sageattn_varlen(
        q.flatten(0, 1),
        k.flatten(0, 1),
        v.flatten(0, 1),
        offsets([300] * 3),
        offsets([300] * 3),
        300,
        300,
        is_causal=True,
    )
    torch.testing.assert_close(packed_out.view_as(dense), dense, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("d", [40, 80, 160])
def test_head_dims_are_padded_up(d):
    lens = [100, 37]
    q, k, v = (packed(lens, 4, d, torch.float16) for _ in range(3))
    out = sageattn_varlen(q, k, v, offsets(lens), offsets(lens), 100, 100)
    assert out.shape == q.shape
    check(out, reference(q, k, v, lens, lens, False), REL_L1[None])


@pytest.mark.parametrize("d", [96, 192, 256])
@pytest.mark.parametrize("path", [None, "fp16"])
@pytest.mark.parametrize("causal", [False, True])
def test_head_dims_of_their_own_kernels(d, path, causal):
    # d=256 natively (16-bit P·V), d=96 and 192 on Hopper: GQA, empty and one-token sequences, K
    # outliers in one sequence.
    lens_q, lens_k = [300, 0, 1, 1000, 17], [700, 3, 1, 1000, 0]
    q, k, v = (
        packed(lens_q, 8, d, torch.bfloat16),
        packed(lens_k, 2, d, torch.bfloat16, 3),
        packed(lens_k, 2, d, torch.bfloat16),
    )
    out = sageattn_varlen(
        q, k, v, offsets(lens_q), offsets(lens_k), 1000, 1000, is_causal=causal, pv_path=path
    )
    check(out, reference(q, k, v, lens_q, lens_k, causal), REL_L1["fp16"])


def test_offsets_on_the_cpu_are_checked_and_used():
    lens = [64, 10]
    q, k, v = (packed(lens, 4, 64, torch.float16) for _ in range(3))
    cpu = offsets(lens, "cpu").long()
    out = sageattn_varlen(q, k, v, cpu, cpu, 64, 64)
    check(out, reference(q, k, v, lens, lens, False), REL_L1[None])
    with pytest.raises(sageattention.SageAttentionError, match="more than max_seqlen_q = 32"):
        sageattn_varlen(q, k, v, cpu, cpu, 32, 64)


def test_large_head_dim_falls_back_per_sequence():
    # One warning per cause per process: sageattn's tests warn too.
    sageattention.core._warned.clear()
    lens = [30, 70]
    q, k, v = (packed(lens, 2, 320, torch.float16) for _ in range(3))
    with pytest.warns(UserWarning, match="head_dim 320"):
        out = sageattn_varlen(q, k, v, offsets(lens), offsets(lens), 70, 70, is_causal=True)
    check(out, reference(q, k, v, lens, lens, True), 0.01)


def test_torch_compile_fullgraph():
    lens = [256, 100, 0, 33]
    q, k, v = (packed(lens, 4, 64, torch.float16) for _ in range(3))
    cu = offsets(lens)

    def f(q, k, v, cu):
        return sageattn_varlen(q, k, v, cu, cu, 256, 256, is_causal=True) * 2

    out = torch.compile(f, fullgraph=True)(q, k, v, cu)
    torch.testing.assert_close(out, f(q, k, v, cu), rtol=0, atol=0)


def test_cuda_graph_capture_and_replay():
    lens = [300, 5, 1000]
    q, k, v = (packed(lens, 4, 128, torch.bfloat16) for _ in range(3))
    cu = offsets(lens)
    sageattn_varlen(q, k, v, cu, cu, 1000, 1000)  # warm up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = sageattn_varlen(q, k, v, cu, cu, 1000, 1000)
    for new_lens in (
        [300, 5, 1000],
        [1000, 300, 5],
    ):  # new data, and new offsets in the same buffers
        cu.copy_(offsets(new_lens))
        q.copy_(torch.randn_like(q))
        graph.replay()
        torch.cuda.synchronize()
        check(out, reference(q, k, v, new_lens, new_lens, False), REL_L1[None])


@pytest.mark.parametrize("causal", [False, True])
def test_a_sharp_sequence_is_recomputed_alone(causal):
    # The sharp-tile guard per sequence: the one with logits ~10^5 matches float64; the others
    # come out as without the guard.
    lens = [17, 300, 0, 130]
    q, k, v = (packed(lens, 4, 128, torch.float32) for _ in range(3))
    q[17:317] *= 300
    k[17:317] *= 300
    q, k, v = q.half(), k.half(), v.half()
    cu = offsets(lens)
    guarded = sageattn_varlen(q, k, v, cu, cu, max(lens), max(lens), is_causal=causal)
    unguarded = sageattn_varlen(
        q, k, v, cu, cu, max(lens), max(lens), is_causal=causal, sharp_threshold=None
    )
    qs, ks, vs = (t[17:317].transpose(0, 1).unsqueeze(0).double() for t in (q, k, v))
    ref = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)[0].transpose(0, 1)
    a, r = guarded[17:317].double().flatten(), ref.flatten()
    assert (a @ r / (a.norm() * r.norm())).item() >= 0.9999
    for rows in (slice(0, 17), slice(317, 447)):
        diff = (guarded[rows].float() - unguarded[rows].float()).abs().sum() / unguarded[
            rows
        ].float().abs().sum()
        assert diff.item() <= 1e-3
