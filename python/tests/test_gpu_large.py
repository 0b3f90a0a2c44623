"""sageattention on tensors past the 32-bit and grid limits (GPU): keys and queries beyond 2^31
elements, a batch beyond the grid's 65,535, and more query heads than the kernels take. Each
output is checked against float32 attention computed in chunks; the long-key case plants one
dominant key per query row, half of them past element 2^31, so that a wrapped address shows as
a wrong row rather than as noise. Needs ~20 GB of GPU memory. Run on the GPU machine:
    python -m pytest -m gpu python/tests/test_gpu_large.py
"""

import math

import pytest
import torch
import torch.nn.functional as F

import sageattention
from sageattention import sageattn
from test_gpu import PATHS, check

pytestmark = pytest.mark.gpu
ELEMENTS_32 = 2**31  # offsets from here on need 64-bit arithmetic
D = 128


def needs_memory(gigabytes):
    free = torch.cuda.mem_get_info()[0] if torch.cuda.is_available() else 0
    return pytest.mark.skipif(
        free < gigabytes * 2**30, reason=f"needs {gigabytes} GB of free GPU memory"
    )


def chunked_reference(q, k, v, scale, chunk=2**20):
    """Attention of q [lq, d] over k, v [lk, d] in float32, chunk by chunk of keys (online
    softmax)."""
    qf = q.float() * scale
    m = torch.full((q.shape[0], 1), -math.inf, device=q.device)
    acc = torch.zeros(q.shape[0], v.shape[1], device=q.device)
    total = torch.zeros(q.shape[0], 1, device=q.device)
    for start in range(0, k.shape[0], chunk):
        s = qf @ k[start : start + chunk].float().T
        m_new = torch.maximum(m, s.amax(dim=1, keepdim=True))
        p = torch.exp(s - m_new)
        factor = torch.exp(m - m_new)
        acc = acc * factor + p @ v[start : start + chunk].float()
        total = total * factor + p.sum(dim=1, keepdim=True)
        m = m_new
    return acc / total


@needs_memory(24)
@pytest.mark.parametrize("path", list(PATHS))
def test_keys_past_2_31_elements(path):
    # One head of 2^24 + 8192 keys: K and V hold more than 2^31 elements each. Every query row has
    # one key that outweighs all the others together (k = 5q: its score is 5|q|²/√d, 35-70,
    # against 2^24 N(0, 1) scores), 128 of them past element 2^31 and 128 spread before it.
    lq, lk = 256, 2**24 + 8192
    assert lk * D > ELEMENTS_32
    seed = torch.seed()
    q = torch.randn(1, 1, lq, D, device="cuda", dtype=torch.float16)
    k = torch.randn(1, 1, lk, D, device="cuda", dtype=torch.float16)
    v = torch.randn(1, 1, lk, D, device="cuda", dtype=torch.float16)
    far = ELEMENTS_32 // D + torch.randperm(lk - ELEMENTS_32 // D, device="cuda")[: lq // 2]
    near = torch.randperm(ELEMENTS_32 // D, device="cuda")[: lq // 2]
    needles = torch.cat([far, near])
    k[0, 0, needles] = (5 * q[0, 0].float()).half()
    out = PATHS[path](q, k, v)
    ref = chunked_reference(q[0, 0], k[0, 0], v[0, 0], 1 / math.sqrt(D))
    assert (ref - v[0, 0, needles].float()).abs().max().item() < 0.01, "the needles dominate"
    try:
        check(out[0, 0], ref, path)
    except AssertionError as e:
        raise AssertionError(f"seed {seed}: {e}") from None


@needs_memory(20)
@pytest.mark.parametrize("path", list(PATHS))
def test_queries_past_2_31_elements(path):
    # NHD with two query heads sharing one KV head: Q and O hold more than 2^31 elements and
    # their rows sit 2 * 128 elements apart; the LSE is checked over the whole length too.
    heads, lq, lk = 2, 2**23 + 1000, 1000
    assert heads * lq * D > ELEMENTS_32
    q = torch.randn(1, lq, heads, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, lk, 1, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, lk, 1, D, device="cuda", dtype=torch.bfloat16)
    out, lse = PATHS[path](q, k, v, tensor_layout="NHD", return_lse=True)
    assert out.shape == q.shape and lse.shape == (1, heads, lq)
    kf, vf = k[0, :, 0].float(), v[0, :, 0].float()
    for start in range(0, lq, 2**20):  # compared chunk by chunk: the float32 copies would be 17 GB
        rows = slice(start, start + 2**20)
        for h in range(heads):
            qf = q[0, rows, h].float()
            ref = F.scaled_dot_product_attention(qf[None], kf[None], vf[None])[0]
            check(out[0, rows, h], ref, path)
            ref_lse = torch.logsumexp(qf @ kf.T / math.sqrt(D), dim=-1)
            assert (lse[0, h, rows] - ref_lse).abs().max().item() < 0.08


@pytest.mark.parametrize("path", list(PATHS))
def test_batch_past_the_grid_limit(path):
    # 65,543 batches: the library launches the kernels in slices of 65,535 (the grid's z limit).
    batch, lq, lk = 65535 + 8, 5, 7
    q = torch.randn(batch, 2, lq, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(batch, 1, lk, 64, device="cuda", dtype=torch.float16)
    v = torch.randn(batch, 1, lk, 64, device="cuda", dtype=torch.float16)
    out, lse = PATHS[path](q, k, v, is_causal=True, return_lse=True)
    kf, vf = k.float().expand(-1, 2, -1, -1), v.float().expand(-1, 2, -1, -1)
    mask = torch.ones(lq, lk, dtype=torch.bool, device="cuda").tril(lk - lq)
    ref = F.scaled_dot_product_attention(q.float(), kf, vf, attn_mask=mask)
    # The slices must each be right, the last (8 batches) as much as the first.
    for part in (slice(0, 65535), slice(65535, batch)):
        check(out[part], ref[part], path)
    s = (q.float() @ kf.transpose(-1, -2) / 8).masked_fill(~mask, -math.inf)
    assert (lse - torch.logsumexp(s, -1)).abs().max().item() < 0.08


@pytest.mark.parametrize("heads_kv", [8, 1])
def test_more_query_heads_than_the_grid_takes(heads_kv):
    # 65,544 query heads: sageattn calls the library on slices of whole KV groups (8 KV heads of
    # 8,193 query heads: 7 groups, then 1), or, with one KV head, on slices of its one group.
    heads = sageattention.core.MAX_QUERY_HEADS + 9
    q = torch.randn(1, heads, 3, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(1, heads_kv, 5, 64, device="cuda", dtype=torch.float16)
    v = torch.randn(1, heads_kv, 5, 64, device="cuda", dtype=torch.float16)
    out, lse = sageattn(q, k, v, return_lse=True)
    group = heads // heads_kv
    kf, vf = (t.float().repeat_interleave(group, 1) for t in (k, v))
    s = q.float() @ kf.transpose(-1, -2) / 8  # torch's own SDPA fails on this many heads
    check(out, torch.softmax(s, -1) @ vf, "auto")
    assert (lse - torch.logsumexp(s, -1)).abs().max().item() < 0.08
