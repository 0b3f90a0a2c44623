"""sageattn_varlen without a GPU: its input checks (offsets given on the CPU are checked value by
value), the fallback to SDPA per sequence on CPU tensors (bottom-right causal per sequence, the
LSE [heads_q, total_q], empty sequences), strict mode, and the varlen operator's fake
implementation, which torch.compile traces. Run against the installed wheel in CI."""

import itertools
import math
import re
import warnings

import pytest
import torch

from sageattention import SageAttentionError, core, sageattn_varlen


def offsets(lengths):
    return torch.tensor([0] + list(itertools.accumulate(lengths)), dtype=torch.int32)


def packed_qkv(lens_q=(5, 0, 9), lens_k=(7, 3, 9), hq=4, hk=2, d=16):
    return (
        torch.randn(sum(lens_q), hq, d),
        torch.randn(sum(lens_k), hk, d),
        torch.randn(sum(lens_k), hk, d),
        offsets(lens_q),
        offsets(lens_k),
        max(lens_q),
        max(lens_k),
    )


def per_sequence(q, k, v, cu_q, cu_k, causal):
    """SDPA on each sequence alone, bottom-right causal, and its LSE [heads_q, total_q]."""
    out = torch.zeros_like(q)
    lse = torch.full((q.shape[1], q.shape[0]), float("-inf"))
    for (q0, q1), (k0, k1) in zip(
        itertools.pairwise(cu_q.tolist()), itertools.pairwise(cu_k.tolist())
    ):
        if q1 == q0 or k1 == k0:
            continue
        qs = q[q0:q1].transpose(0, 1)
        ks, vs = (
            t[k0:k1].transpose(0, 1).repeat_interleave(q.shape[1] // k.shape[1], 0) for t in (k, v)
        )
        s = qs @ ks.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if causal:
            keep = torch.ones(q1 - q0, k1 - k0, dtype=torch.bool).tril(k1 - k0 - (q1 - q0))
            s = s.masked_fill(~keep, float("-inf"))
        lse[:, q0:q1] = torch.logsumexp(s, -1)
        out[q0:q1] = (torch.softmax(s, -1).nan_to_num(0.0) @ vs).transpose(0, 1)
    return out, lse


@pytest.mark.parametrize("causal", [False, True])
def test_cpu_tensors_fall_back_to_sdpa_per_sequence(causal):
    core._warned.clear()
    # Sequence 0 has more queries than keys: under the causal mask its first rows see nothing.
    q, k, v, cu_q, cu_k, max_q, max_k = packed_qkv(lens_q=(5, 0, 9, 4), lens_k=(3, 3, 9, 0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, lse = sageattn_varlen(
            q, k, v, cu_q, cu_k, max_q, max_k, is_causal=causal, return_lse=True
        )
        sageattn_varlen(q, k, v, cu_q, cu_k, max_q, max_k, is_causal=causal)
    messages = [str(w.message) for w in caught]
    assert (
        len(messages) == 1
        and "falling back to torch scaled_dot_product_attention per sequence" in messages[0]
    )
    ref, ref_lse = per_sequence(q, k, v, cu_q, cu_k, causal)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(lse, ref_lse)
    assert lse.shape == (4, 18) and out[14:].abs().max() == 0  # the last sequence has no keys


def test_strict_mode_raises_instead_of_falling_back():
    with pytest.raises(
        SageAttentionError, match="sageattn_varlen: cannot run the SageAttention kernels"
    ):
        sageattn_varlen(*packed_qkv(), strict=True)


def test_the_fallback_takes_head_dims_the_kernels_do_not():
    q, k, v, cu_q, cu_k, max_q, max_k = packed_qkv(d=320)
    out = sageattn_varlen(q, k, v, cu_q, cu_k, max_q, max_k)
    torch.testing.assert_close(out, per_sequence(q, k, v, cu_q, cu_k, False)[0])


def escape(text):
    return re.escape(text)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: (a[0][None],) + a[1:], "q must be 3-D [total_tokens, heads, head_dim]"),
        (lambda a: (a[0], a[1][:, :1]) + a[2:], "k and v must have the same shape"),
        (lambda a: (a[0], a[1].double()) + a[2:], "q, k, v must have one dtype"),
        (lambda a: (a[0][..., :8],) + a[1:], "head dims differ: q 8, k 16"),
        (
            lambda a: (a[0][:, :3],) + a[1:],
            "query heads (3) must be a multiple of key/value heads (2)",
        ),
        (lambda a: a[:3] + (a[3].float(),) + a[4:], "cu_seqlens_q must be a 1-D int32 tensor"),
        (
            lambda a: a[:3] + (a[3][:1],) + a[4:],
            "cu_seqlens_q has 1 values; a batch of b sequences has b + 1",
        ),
        (lambda a: a[:4] + (a[4][:3],) + a[5:], "cu_seqlens_q has 4 values and cu_seqlens_k 3"),
        (lambda a: a[:5] + (-1, a[6]), "max_seqlen_q must be an int from 0 to 2^31 - 1, not -1"),
        (lambda a: a[:6] + (9.0,), "max_seqlen_k must be an int from 0 to 2^31 - 1, not 9.0"),
        (
            lambda a: a[:5] + (8, a[6]),
            "sequence 2 has 9 rows in cu_seqlens_q, more than max_seqlen_q = 8",
        ),
        (lambda a: a[:3] + (a[3] + 1,) + a[4:], "cu_seqlens_q must start at 0, not 1"),
        (
            lambda a: a[:3] + (torch.tensor([0, 5, 4, 14], dtype=torch.int32),) + a[4:],
            "cu_seqlens_q decreases at sequence 1",
        ),
        (
            lambda a: a[:4] + (torch.tensor([0, 7, 10, 18], dtype=torch.int32),) + a[5:],
            "cu_seqlens_k ends at 18, but the tensor has 19 rows",
        ),
    ],
)
def test_validation_says_what_is_wrong(change, message):
    args = change(packed_qkv())
    with pytest.raises(SageAttentionError, match=escape(message)):
        sageattn_varlen(*args)


def test_unknown_options():
    with pytest.raises(SageAttentionError, match="pv_path must be one of"):
        sageattn_varlen(*packed_qkv(), pv_path="fp4")
    with pytest.raises(SageAttentionError, match="qk_quant_gran must be"):
        sageattn_varlen(*packed_qkv(), qk_quant_gran="per_thread")


def test_fake_implementation_gives_shapes_for_torch_compile():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q = torch.empty(300, 8, 128, dtype=torch.float16, device="cuda")
        k = torch.empty(500, 2, 128, dtype=torch.float16, device="cuda")
        cu = torch.empty(4, dtype=torch.int32, device="cuda")
        o, lse = torch.ops.sageattention.attention_varlen(
            q, k, k, cu, cu, 200, 300, True, 0.1, 3, 0, 1, 0, True, 100.0, True
        )
        assert o.shape == q.shape and o.dtype == torch.float16
        assert lse.shape == (8, 300) and lse.dtype == torch.float32
        o, lse = torch.ops.sageattention.attention_varlen(
            q, k, k, cu, cu, 200, 300, False, 0.1, 0, 0, 1, 0, True, 100.0, False
        )
        assert lse.numel() == 0


def test_torch_compile_fullgraph_traces_the_varlen_operator():
    def f(q, k, v, cu):
        o, _ = torch.ops.sageattention.attention_varlen(
            q, k, v, cu, cu, 64, 64, True, 0.1, 0, 0, 1, 0, True, 100.0, False
        )
        return o * 2

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    q = torch.empty(100, 8, 64, dtype=torch.bfloat16, device="meta")
    k = torch.empty(100, 2, 64, dtype=torch.bfloat16, device="meta")
    cu = torch.empty(3, dtype=torch.int32, device="meta")
    out = compiled(q, k, k, cu)
    assert out.shape == q.shape and out.device.type == "meta"
