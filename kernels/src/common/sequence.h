// One sequence of a call as the kernels see it: where its rows lie in the caller's tensors and in
// the workspace, and how long it is. Host and device: the quantization kernels, the attention
// kernels and the host's workspace layout (workspace.h) must agree on every number here.
//
// A dense call's sequence b is batch b: qo_len queries and kv_len keys from row 0 of its batch,
// and the workspace keeps one region of kv_pad rows per (batch, KV head). A varlen call's
// sequences are packed along the rows of one tensor (sageattn.h: Varlen); the workspace then
// keeps one region per KV head, in which sequence b's keys start at varlen_row_base.
#pragma once

#include <cstdint>

#include "host_device.h"
#include "sageattn/sageattn.h"

namespace sageattn::detail {

// A varlen sequence's region of the workspace: its keys, then zeros up to whole tiles of
// kVarlenTileRows (the kernels' widest key block, and the quantization's job), so that no tile
// of one sequence reads another's quantized values. It starts kVarlenRowAlign-aligned (K's scale
// groups, 16 or 64 rows, start with the sequence; the e4m3 V rows are stored 16 bytes at a time).
// Computed from cu_seqlens_k[b] and b alone, so that no kernel needs a pass over the batch:
//   base(b) = round_up(cu[b], 64) + 192·b.
// Regions never overlap: base(b + 1) ≥ cu[b] + len + 192·b + 192, while sequence b's region
// ends before round_up(cu[b], 64) + 192·b + round_up(len, 128) ≤ cu[b] + 63 + 192·b + len + 127.
inline constexpr int kVarlenRowAlign = 64;
inline constexpr int kVarlenTileRows = 128;
inline constexpr int kVarlenRowsPerSequence = 192;  // ≥ (align - 1) + (tile - 1), a multiple of 64
static_assert(kVarlenRowsPerSequence >= kVarlenRowAlign - 1 + kVarlenTileRows - 1 &&
              kVarlenRowsPerSequence % kVarlenRowAlign == 0);

SAGEATTN_HOST_DEVICE inline std::int64_t varlen_row_base(int start, int b) {
  return (static_cast<std::int64_t>(start) + kVarlenRowAlign - 1) / kVarlenRowAlign *
             kVarlenRowAlign +
         static_cast<std::int64_t>(kVarlenRowsPerSequence) * b;
}

// Rows of sequence b's region that the quantization writes: its keys, then zeros up to a whole
// tile (what the attention kernels may read of it).
SAGEATTN_HOST_DEVICE inline int varlen_region_rows(int len) {
  return (len + kVarlenTileRows - 1) / kVarlenTileRows * kVarlenTileRows;
}

// Rows of a varlen workspace region (per KV head): every sequence's region fits whatever the
// lengths, as long as they add up to at most total_k (the clamping below keeps them there).
SAGEATTN_HOST_DEVICE inline std::int64_t varlen_workspace_rows(int total_k, int batch) {
  return varlen_row_base(total_k, batch);
}

// A sequence's rows in the caller's tensor: the first, how many (at most the call's bound), and
// whether the offsets were inconsistent (decreasing, outside [0, total], or longer than the
// bound): the kernels then write NaN rather than a plausible wrong result.
struct SeqSpan {
  int start;
  int len;
  bool invalid;
};

// Sequence b's span. Dense: rows 0 .. max_len - 1 of its batch (kVarlen false: the kernels'
// dense instantiations, where every number here is the call's). Varlen: cu[b] .. cu[b + 1] - 1,
// clamped into [0, total] so that no row outside the tensor is touched.
template <bool kVarlen>
SAGEATTN_HOST_DEVICE inline SeqSpan sequence_span(const std::int32_t* cu, int b, int total,
                                                  int max_len) {
  if constexpr (!kVarlen) return {0, max_len, false};
#if defined(__CUDA_ARCH__)
  const int first = __ldg(cu + b), last = __ldg(cu + b + 1);
#else
  const int first = cu[b], last = cu[b + 1];
#endif
  const int start = first < 0 ? 0 : first > total ? total : first;
  const int end = last < start ? start : last > total ? total : last;
  const int len = end - start;
  const bool invalid = first != start || last != end || len > max_len;
  return {start, len > max_len ? max_len : len, invalid};
}

#if defined(__CUDACC__)
// 1 / len, the factor of K's mean over a varlen sequence of len keys (0 for none): correctly
// rounded, as the host computes a dense call's, so that the quantization's smoothing and the
// attention kernels' q · mean(K) use the same number.
__device__ __forceinline__ float inverse_length(int len) {
  return len > 0 ? __fdiv_rn(1.f, static_cast<float>(len)) : 0.f;
}
#endif

}  // namespace sageattn::detail
