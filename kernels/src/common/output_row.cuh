// The attention kernels' shared epilogue step: one row of O, from the mma accumulator layout
// (both the mma.sync and the wgmma kernels hold a row's columns 8j + 2t, 8j + 2t + 1 in thread
// t of a quad), converted to the caller's 16-bit type and stored 16 bytes at a time.
#pragma once

#include <cstdint>

#include "attention_launch.h"
#include "attention_sequence.cuh"
#include "device_primitives.cuh"

namespace sageattn::detail {

// Writes row `row` of `head` of the sequence's O; value(j) gives this thread's two output values
// of 8-column tile j, normalised. Every lane of the warp must call it (the stores' transpose
// shuffles); rows past the sequence's queries are computed and not stored. A sequence whose
// varlen offsets were invalid gets NaN (sageattn.h: Varlen).
template <int kTiles, bool kVarlen, typename Value>
__device__ __forceinline__ void write_output_row(const AttentionArgs& a,
                                                 const AttentionSequence<kVarlen>& seq, int head,
                                                 int row, int t, Value value) {
  unsigned words[kTiles];
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    const float2 v = value(j);
    words[j] = a.o_bf16 ? device::pack_16bit_x2<__nv_bfloat16>(v.x, v.y)
                        : device::pack_16bit_x2<half>(v.x, v.y);
    if (kVarlen && seq.invalid) words[j] = a.o_bf16 ? 0x7FC07FC0u : 0x7E007E00u;  // NaN, NaN
  }
  const bool active = row < seq.q_len;
  std::uint16_t* o_row = static_cast<std::uint16_t*>(a.o) + seq.o_row(a, head, active ? row : 0);
  device::store_accumulator_row(words, o_row, active, t);
}

}  // namespace sageattn::detail
