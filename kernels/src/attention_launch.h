// What the host passes to the attention kernel, and the launcher that each generated
// instantiation file (instantiations/*.cu) defines for one (head dim, P·V path, V type).
// Host code includes this, never attention.cuh.
#pragma once

#include <cstdint>
#include <cuda_runtime_api.h>

#include "sageattn/sageattn.h"

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

template <int D, PvPath PATH, typename VT>
cudaError_t launch_attention(const AttentionArgs& args, int batch, cudaStream_t stream);

// The Hopper wgmma kernel (sm90/attention_sm90.cuh); compiled only for sm_90a. PvT: P·V's
// type, __nv_fp8_e4m3 for PvPath::fp8_sm90, half or __nv_bfloat16 (the input's) for fp16_sm90.
template <int D, typename PvT>
cudaError_t launch_attention_sm90(const AttentionArgs& args, int batch, cudaStream_t stream);

}  // namespace sageattn::detail
