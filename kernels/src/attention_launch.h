// What the host passes to the attention kernel, and the launcher that each generated
// instantiation file (instantiations/*.cu) defines for one (head dim, P·V path, V type).
// Host code includes this, never attention.cuh.
#pragma once

#include <cstdint>
#include <cuda_runtime_api.h>

#include "sageattn/sageattn.h"
#include "workspace.h"

namespace sageattn::detail {

struct AttentionArgs {
  const std::int8_t* k;
  const float* k_scale;
  const std::uint8_t* v_fp8;  // fp8 path
  const float* v_amax;        // fp8 path
  const void* v;              // fp16 path: the caller's V
  std::int64_t v_sb, v_sh, v_ss;
  void* o;
  std::int64_t o_sb, o_sh, o_ss;
  bool o_bf16;
  float* lse;
  int heads_q, heads_kv, qo_len, kv_len, q_pad, kv_pad, q_rows, k_rows;
  bool causal;
  // Q, which the kernels quantize themselves (quantize_q.cuh): the caller's 16-bit Q,
  // sm_scale·log2(e) for its scales, and, for the LSE with smoothing, K's column sums (k_sum,
  // else null) with 1 / kv_len and sm_scale for sm_scale·(q · mean(K)).
  const void* q16;
  std::int64_t q_sb, q_sh, q_ss;
  float q_scale_mult;
  const float* k_sum;
  float inv_kv_len, sm_scale;
};

// The kernels' arguments for a call: its tensors, the workspace's arrays (laid out by
// layout_workspace) and the resolved sm_scale.
inline AttentionArgs attention_args(const Params& p, const Workspace& w, float sm_scale) {
  AttentionArgs a{};
  a.k = w.k;
  a.k_scale = w.k_scale;
  a.v_fp8 = uses_fp8_v(p.pv_path) ? w.v : nullptr;  // else its region is empty
  a.v_amax = w.v_amax;
  a.v = p.v.data;
  a.v_sb = p.v.stride_batch;
  a.v_sh = p.v.stride_head;
  a.v_ss = p.v.stride_seq;
  a.o = const_cast<void*>(p.o.data);
  a.o_sb = p.o.stride_batch;
  a.o_sh = p.o.stride_head;
  a.o_ss = p.o.stride_seq;
  a.o_bf16 = p.dtype == DType::bf16;
  a.lse = p.lse;
  a.heads_q = p.heads_q;
  a.heads_kv = p.heads_kv;
  a.qo_len = p.qo_len;
  a.kv_len = p.kv_len;
  a.q_pad = w.q_pad;
  a.kv_pad = w.kv_pad;
  a.q_rows = w.q_rows;
  a.k_rows = w.k_rows;
  a.causal = p.causal;
  a.q16 = p.q.data;
  a.q_sb = p.q.stride_batch;
  a.q_sh = p.q.stride_head;
  a.q_ss = p.q.stride_seq;
  a.q_scale_mult = sm_scale * kLog2e;  // the softmax works in exp2
  a.k_sum = p.smooth_k && p.lse ? w.k_sum : nullptr;
  a.inv_kv_len = 1.f / static_cast<float>(p.kv_len);
  a.sm_scale = sm_scale;
  return a;
}

// CUDA limits a grid's y and z dimensions to 65,535; the attention kernels put the query heads
// in y and the batch in z. A larger batch is launched in slices (batch_slice); more query heads
// than that, validate() refuses (sageattn.h: kMaxQueryHeads).
inline constexpr int kMaxGridBatch = 65535;
static_assert(kMaxQueryHeads == 65535, "the grid's y dimension holds the query heads");

// The arguments for batches first_batch, first_batch + 1, ... of `a`: every pointer moved to
// first_batch, so that a launch whose grid covers only those batches indexes them from zero.
// (The caller's tensors and every workspace array are batch-major: [B, ...].)
inline AttentionArgs batch_slice(const AttentionArgs& a, int first_batch, int head_dim) {
  const std::int64_t b = first_batch;
  const std::int64_t units = b * a.heads_kv;  // (batch, KV head) pairs before the slice
  const auto move = [](auto* p, std::int64_t elements) { return p == nullptr ? p : p + elements; };
  AttentionArgs s = a;
  s.k = move(a.k, units * a.kv_pad * head_dim);
  s.k_scale = move(a.k_scale, units * (a.kv_pad / a.k_rows));
  s.v_fp8 = move(a.v_fp8, units * head_dim * a.kv_pad);
  s.v_amax = move(a.v_amax, units * head_dim);
  s.k_sum = move(a.k_sum, units * head_dim);
  // The caller's tensors, 16-bit elements with their own batch strides.
  s.v = move(static_cast<const std::uint16_t*>(a.v), b * a.v_sb);
  s.q16 = move(static_cast<const std::uint16_t*>(a.q16), b * a.q_sb);
  s.o = move(static_cast<std::uint16_t*>(a.o), b * a.o_sb);
  s.lse = move(a.lse, b * a.heads_q * a.qo_len);  // [B, Hq, qo_len]
  return s;
}

template <int D, PvPath PATH, typename VT>
cudaError_t launch_attention(const AttentionArgs& args, int batch, cudaStream_t stream);

// The Hopper wgmma kernel (sm90/attention_sm90.cuh); compiled only for sm_90a. PvT: P·V's
// type, __nv_fp8_e4m3 for PvPath::fp8_sm90, half or __nv_bfloat16 (the input's) for fp16_sm90.
template <int D, typename PvT>
cudaError_t launch_attention_sm90(const AttentionArgs& args, int batch, cudaStream_t stream);

}  // namespace sageattn::detail
