// The attention kernels' shared epilogue step: one row of O, from the mma accumulator layout
// (both the mma.sync and the wgmma kernels hold a row's columns 8j + 2t, 8j + 2t + 1 in thread
// t of a quad), converted to the caller's 16-bit type and stored 16 bytes at a time.
#pragma once

#include <cstdint>

#include "attention_launch.h"
#include "device_primitives.cuh"

namespace sageattn::detail {

// Writes row `row` of head (batch, head) of O; value(j) gives this thread's two output values
// of 8-column tile j, normalised. Every lane of the warp must call it (the stores' transpose
// shuffles); rows past qo_len are computed and not stored.
template <int kTiles, typename Value>
__device__ __forceinline__ void write_output_row(const AttentionArgs& a, int batch, int head,
                                                 int row, int t, Value value) {
  unsigned words[kTiles];
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    const float2 v = value(j);
    words[j] = a.o_bf16 ? device::pack_16bit_x2<__nv_bfloat16>(v.x, v.y)
                        : device::pack_16bit_x2<half>(v.x, v.y);
  }
  const bool active = row < a.qo_len;
  std::uint16_t* o_row = static_cast<std::uint16_t*>(a.o) + batch * a.o_sb + head * a.o_sh +
                         static_cast<std::int64_t>(active ? row : 0) * a.o_ss;
  device::store_accumulator_row(words, o_row, active, t);
}

}  // namespace sageattn::detail
