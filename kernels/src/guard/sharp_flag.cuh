// The attention kernels' half of the sharp-tile guard (sharp_tiles.h): at the epilogue, each
// thread holds its rows' largest logit (the online softmax's row max), and a 64-row tile with a
// row above the threshold is appended to the worklist for the 16-bit Q·Kᵀ kernel.
#pragma once

#include <cstdint>

#include "../common/attention_launch.h"
#include "../common/attention_sequence.cuh"
#include "../common/device_primitives.cuh"

namespace sageattn::detail {

// Whether a thread's row `row` (from the sequence's first query) is sharp. row_max: its
// largest logit in exp2 units; the 16-bit P·V paths let the max they subtract lag the true one
// by up to `headroom`, so a row within that of the limit counts too.
template <bool kVarlen>
__device__ __forceinline__ bool sharp_row(const AttentionArgs& a,
                                          const AttentionSequence<kVarlen>& seq, int row,
                                          float row_max, float headroom) {
  if (kVarlen && seq.invalid) return false;  // its rows are NaN whatever happens
  return row < seq.q_len && row_max > a.sharp_limit - headroom;
}

// Whether a thread's row `row` overflowed: `o_total`, the sum of |O| over its columns, is not
// finite although the row exists (accumulation_may_overflow: FP16 block sums). Inputs with inf or
// NaN vote too; the sharp kernel's result for them is as non-finite, at the cost of one tile.
template <bool kVarlen>
__device__ __forceinline__ bool overflowed_row(const AttentionSequence<kVarlen>& seq, int row,
                                               float o_total) {
  if (kVarlen && seq.invalid) return false;
  return row < seq.q_len && !isfinite(o_total);
}

// The tile of rows row0 .. row0 + 63, which one thread of it appends (its vote taken by the
// caller). Past the worklist's capacity nothing is written; the capacity covers every tile of
// the call (sharp_tile_capacity), so that only happens to a workspace sized for another call.
template <bool kVarlen>
__device__ __forceinline__ void append_sharp_tile(const AttentionArgs& a,
                                                  const AttentionSequence<kVarlen>& seq, int head,
                                                  int row0) {
  const unsigned slot = atomicAdd(a.sharp_count, 1u);
  if (slot >= static_cast<unsigned>(a.sharp_capacity)) return;
  a.sharp_tiles[slot] = SharpTile{kVarlen ? seq.b : a.batch0 + seq.b,
                                  head,
                                  row0,
                                  seq.q_start,
                                  seq.q_len,
                                  seq.kv_start,
                                  seq.kv_len,
                                  0};
}

}  // namespace sageattn::detail
