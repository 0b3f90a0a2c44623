// What the host passes to the attention kernel, and the launcher that each generated
// instantiation file (instantiations/*.cu) defines for one (head dim, P·V path, V type,
// accumulation).
// Host code includes this, never attention.cuh.
#pragma once

#include <cstdint>
#include <cuda_runtime_api.h>
#include <limits>

#include "mask.h"
#include "sageattn/sageattn.h"
#include "sharp_tiles.h"
#include "workspace.h"

namespace sageattn::detail {

// Defined by kernels/CMakeLists.txt on the instantiations of a head dim that SAGEATTN_HEAD_DIMS
// leaves out: their launchers compile without their kernels and return cudaErrorNotSupported
// (validate() refuses such a call first: common/built_head_dims.h).
#if defined(SAGEATTN_HEAD_DIM_LEFT_OUT)
inline constexpr bool kHeadDimLeftOut = true;
#else
inline constexpr bool kHeadDimLeftOut = false;
#endif

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
  float* lse;  // [B, Hq, qo_len]; varlen: [Hq, total_q]
  int heads_q, heads_kv, qo_len, kv_len, q_pad, kv_pad, q_rows, k_rows;
  // The workspace's K/V units (workspace.h): rows per unit, and units per batch (0: varlen).
  int unit_rows, unit_scales, unit_batch_stride;
  KeyMask::Kind mask;  // each sequence's KeyMask is made of it (mask.h)
  // Varlen calls (sageattn.h: Varlen; else null): the sequences' offsets, the tensors' rows,
  // and the first sequence of this launch (batch_slice), which the kernels add to blockIdx.z.
  const std::int32_t* cu_q;
  const std::int32_t* cu_k;
  int total_q, total_k, seq0;
  // Q, which the kernels quantize themselves (quantize_q.cuh): the caller's 16-bit Q,
  // sm_scale·log2(e) for its scales, and, for the LSE with smoothing, K's column sums (k_sum,
  // else null) and sm_scale for sm_scale·(q · mean(K)).
  const void* q16;
  std::int64_t q_sb, q_sh, q_ss;
  float q_scale_mult;
  const float* k_sum;
  float inv_kv_len, sm_scale;  // inv_kv_len: 1 / kv_len (dense calls)
  // The sharp-tile guard (sharp_tiles.h; sharp_count null: none). A row whose largest logit
  // (exp2 units, as the softmax holds it) exceeds sharp_limit flags its 64-row tile, as does
  // one whose O overflowed (accumulation_may_overflow). The sharp kernel reads the caller's K
  // (k16) and, for a dense call, names batches from batch0, the launch's first (batch_slice).
  float sharp_limit;
  std::uint32_t* sharp_count;
  SharpTile* sharp_tiles;
  int sharp_capacity, batch0;
  const void* k16;
  std::int64_t k_sb, k_sh, k_ss;
};

// The kernels' arguments for a call: its tensors, the workspace's arrays (laid out by
// layout_workspace) and the resolved sm_scale.
inline AttentionArgs attention_args(const Params& p, const Workspace& w, float sm_scale) {
  const bool varlen = p.is_varlen();
  AttentionArgs a{};
  a.k = w.k;
  a.k_scale = w.k_scale;
  a.v_fp8 = uses_fp8_v(p.pv_path) ? w.v : nullptr;  // else its region is empty
  a.v_amax = w.v_amax;
  a.v = p.v.data;
  // A varlen call's sequences lie along the rows: no batch stride (sequence.h adds the rows).
  a.v_sb = varlen ? 0 : p.v.stride_batch;
  a.v_sh = p.v.stride_head;
  a.v_ss = p.v.stride_seq;
  a.o = const_cast<void*>(p.o.data);
  a.o_sb = varlen ? 0 : p.o.stride_batch;
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
  a.unit_rows = w.unit_rows;
  a.unit_scales = w.unit_scales;
  a.unit_batch_stride = w.unit_batch_stride;
  a.mask = KeyMask::kind_of_call(p.causal);
  a.cu_q = p.varlen.cu_seqlens_q;
  a.cu_k = p.varlen.cu_seqlens_k;
  a.total_q = p.varlen.total_q;
  a.total_k = p.varlen.total_k;
  a.seq0 = 0;
  a.q16 = p.q.data;
  a.q_sb = varlen ? 0 : p.q.stride_batch;
  a.q_sh = p.q.stride_head;
  a.q_ss = p.q.stride_seq;
  a.q_scale_mult = sm_scale * kLog2e;  // the softmax works in exp2
  a.k_sum = p.smooth_k && p.lse ? w.k_sum : nullptr;
  a.inv_kv_len = 1.f / static_cast<float>(p.kv_len);
  a.sm_scale = sm_scale;
  // No row is sharp where the guard is off (the worklist may still be kept: redoes_tiles).
  a.sharp_limit =
      p.guards_sharp_tiles() ? p.sharp_threshold * kLog2e : std::numeric_limits<float>::infinity();
  a.sharp_count = w.sharp_count;
  a.sharp_tiles = w.sharp_tiles;
  a.sharp_capacity = w.sharp_capacity;
  a.batch0 = 0;
  a.k16 = p.k.data;
  a.k_sb = varlen ? 0 : p.k.stride_batch;
  a.k_sh = p.k.stride_head;
  a.k_ss = p.k.stride_seq;
  return a;
}

// CUDA limits a grid's y and z dimensions to 65,535; the attention kernels put the query heads
// in y and the batch in z. A larger batch is launched in slices (batch_slice); more query heads
// than that, validate() refuses (sageattn.h: kMaxQueryHeads).
inline constexpr int kMaxGridBatch = 65535;
static_assert(kMaxQueryHeads == 65535, "the grid's y dimension holds the query heads");

// The arguments for batches first_batch, first_batch + 1, ... of `a`, so that a launch whose
// grid covers only those batches indexes them from zero. Dense calls: every pointer moved to
// first_batch (the caller's tensors and every workspace array are batch-major: [B, ...]).
// Varlen calls: nothing moves (the sequences' rows come from their offsets, and the workspace's
// units are KV heads); the kernels count sequences from seq0.
inline AttentionArgs batch_slice(const AttentionArgs& a, int first_batch, int head_dim) {
  AttentionArgs s = a;
  if (a.cu_q != nullptr) {
    s.seq0 = a.seq0 + first_batch;
    return s;
  }
  const std::int64_t b = first_batch;
  const std::int64_t units = b * a.unit_batch_stride;  // (batch, KV head) pairs before the slice
  const std::int64_t sequences = b * a.heads_kv;       // statistics are per (batch, KV head)
  const auto move = [](auto* p, std::int64_t elements) { return p == nullptr ? p : p + elements; };
  s.k = move(a.k, units * a.unit_rows * head_dim);
  s.k_scale = move(a.k_scale, units * a.unit_scales);
  s.v_fp8 = move(a.v_fp8, units * head_dim * a.unit_rows);
  s.v_amax = move(a.v_amax, sequences * head_dim);
  s.k_sum = move(a.k_sum, sequences * head_dim);
  // The caller's tensors, 16-bit elements with their own batch strides.
  s.v = move(static_cast<const std::uint16_t*>(a.v), b * a.v_sb);
  s.q16 = move(static_cast<const std::uint16_t*>(a.q16), b * a.q_sb);
  s.o = move(static_cast<std::uint16_t*>(a.o), b * a.o_sb);
  s.lse = move(a.lse, b * a.heads_q * a.qo_len);  // [B, Hq, qo_len]
  s.k16 = move(static_cast<const std::uint16_t*>(a.k16), b * a.k_sb);
  s.batch0 = a.batch0 + first_batch;  // the sharp worklist's entries name whole-call batches
  return s;
}

template <int D, PvPath PATH, typename VT, PvAccum ACC>
cudaError_t launch_attention(const AttentionArgs& args, int batch, cudaStream_t stream);

// The Hopper wgmma kernel (sm90/attention_sm90.cuh); compiled only for sm_90a. PvT: P·V's
// type, __nv_fp8_e4m3 for PvPath::fp8_sm90, half or __nv_bfloat16 (the input's) for fp16_sm90.
template <int D, typename PvT>
cudaError_t launch_attention_sm90(const AttentionArgs& args, int batch, cudaStream_t stream);

// The sharp-tile kernel (sharp_redo.cuh) at head dim D for inputs of type T (half or
// __nv_bfloat16): as many CTAs as fit on the GPU's `sms` SMs work through the worklist the
// attention launches filled. `args`: the whole call's (not a batch slice's). programmatic:
// launched as a programmatic dependent of the attention kernel before it (compute capability
// 9.0+).
template <int D, typename T>
cudaError_t launch_sharp_redo(const AttentionArgs& args, int sms, bool programmatic,
                              cudaStream_t stream);

}  // namespace sageattn::detail
