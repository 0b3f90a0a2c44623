// The sequence an attention CTA works on (both kernels): its rows in the caller's Q, O, K and V,
// its lengths, where its keys lie in the workspace, and where its statistics are. Dense calls:
// batch b with the call's lengths; varlen calls: the packed rows of cu_seqlens (sequence.h).
// kVarlen is a template parameter of the kernels: their dense instantiations see the call's
// numbers (kernel parameters, which cost no registers), as they did before varlen calls existed.
#pragma once

#include <cstdint>

#include "attention_launch.h"
#include "sequence.h"

namespace sageattn::detail {

// Row `row` of head `head` of sequence b (its first query at row q_start of the tensor) in the
// caller's O (elements from a.o), and its LSE entry: [batch, heads_q, qo_len], or [heads_q,
// total_q] for a varlen call. AttentionSequence's o_row and lse_row, and the sharp-tile kernel,
// whose worklist entries carry the sequence (sharp_redo.cuh).
__device__ __forceinline__ std::int64_t output_offset(const AttentionArgs& a, int b, int head,
                                                      int q_start, int row) {
  return b * a.o_sb + head * a.o_sh + static_cast<std::int64_t>(q_start + row) * a.o_ss;
}
template <bool kVarlen>
__device__ __forceinline__ std::int64_t lse_offset(const AttentionArgs& a, int b, int head,
                                                   int q_start, int row) {
  if constexpr (kVarlen) return static_cast<std::int64_t>(head) * a.total_q + q_start + row;
  return static_cast<std::int64_t>(b * a.heads_q + head) * a.qo_len + row;
}

template <bool kVarlen>
struct AttentionSequence {
  int b;                 // the sequence (= the batch of a dense call, counted in this launch)
  int q_start, q_len;    // its rows of Q and O: q_start .. q_start + q_len - 1
  int kv_start, kv_len;  // its rows of K and V
  int unit, unit_row0;  // where its keys start in the workspace: (unit, row), the TMA's coordinates
  int kv_rows;          // rows of its region the quantization wrote (keys, then zeros)
  int stats;            // (sequence, KV head): its K column sums' and V maxima's index
  bool invalid;         // varlen offsets that do not fit the bounds: write NaN (sageattn.h)

  __device__ __forceinline__ AttentionSequence(const AttentionArgs& a, int batch, int kv_head) {
    b = kVarlen ? a.seq0 + batch : batch;
    const SeqSpan q = sequence_span<kVarlen>(a.cu_q, b, a.total_q, a.qo_len);
    const SeqSpan k = sequence_span<kVarlen>(a.cu_k, b, a.total_k, a.kv_len);
    q_start = q.start;
    q_len = q.len;
    kv_start = k.start;
    kv_len = k.len;
    invalid = q.invalid || k.invalid;
    stats = b * a.heads_kv + kv_head;
    unit = kVarlen ? kv_head : stats;
    unit_row0 = kVarlen ? static_cast<int>(varlen_row_base(k.start, b)) : 0;
    kv_rows = kVarlen ? varlen_region_rows(k.len) : a.kv_pad;
  }

  // Its first key's row among all of the workspace's K rows (units × unit_rows).
  __device__ __forceinline__ std::int64_t ws_row0(const AttentionArgs& a) const {
    return static_cast<std::int64_t>(unit) * a.unit_rows + unit_row0;
  }
  // Its first key's scale (one per k_rows keys: unit_rows and unit_row0 are multiples of 64).
  __device__ __forceinline__ const float* k_scales(const AttentionArgs& a) const {
    // (unit_rows / k_rows rather than unit_scales: the same number, but ptxas then spills 4
    // bytes in the FP8 mma.sync kernel at d=64 on sm_90a.)
    const float* scales = a.k_scale + static_cast<std::int64_t>(unit) * (a.unit_rows / a.k_rows);
    return kVarlen ? scales + (unit_row0 >> (__ffs(a.k_rows) - 1)) : scales;
  }
  // Row `row` of head `head` of the caller's Q, O and LSE (elements from their pointers).
  __device__ __forceinline__ std::int64_t q_row(const AttentionArgs& a, int head, int row) const {
    return b * a.q_sb + head * a.q_sh + static_cast<std::int64_t>(q_start + row) * a.q_ss;
  }
  __device__ __forceinline__ std::int64_t o_row(const AttentionArgs& a, int head, int row) const {
    return output_offset(a, b, head, q_start, row);
  }
  __device__ __forceinline__ std::int64_t lse_row(const AttentionArgs& a, int head, int row) const {
    return lse_offset<kVarlen>(a, b, head, q_start, row);
  }
  // 1 / kv_len, K's mean's factor: the host's (inv_kv_len) for dense calls, else computed here
  // with the same correctly rounded division (0 for a sequence without keys), so that Q's
  // q · mean(K) and K's smoothing by the quantization kernels agree.
  __device__ __forceinline__ float inv_kv_len(const AttentionArgs& a) const {
    if constexpr (!kVarlen) return a.inv_kv_len;
    return inverse_length(kv_len);
  }
};

}  // namespace sageattn::detail
