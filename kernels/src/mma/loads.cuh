// The mma.sync kernel's tile loads: cp.async copies of 16-byte chunks into swizzled shared
// memory (mma/attention.cuh).
#pragma once

#include "../common/device_primitives.cuh"

namespace sageattn::detail {

// A tile of kRows rows of kRowBytes, copied by the CTA's 128 threads in 16-byte chunks to its
// swizzled place in shared memory: copy(row, chunk, destination) issues one chunk. Each thread
// keeps one chunk column and steps through rows a multiple of 8 apart, so its swizzle is the
// same for all of them and the destinations differ by constants (no address registers to
// keep, see swizzled_offset).
// (Rows of 512 bytes, d=256's 16-bit V, take 4 rows per pass: a thread's rows then alternate
// between two swizzles.)
template <int kRowBytes, int kRows, typename Copy>
__device__ __forceinline__ void copy_tile_async(unsigned char* tile, int tid, Copy copy) {
  constexpr int kChunks = kRowBytes / 16;
  constexpr int kRowsPerPass = 128 / kChunks;
  static_assert((kRowsPerPass % 8 == 0 || kRowsPerPass == 4) && kRows % kRowsPerPass == 0,
                "whole passes of 8-row groups, or of half ones");
  const int row0 = tid / kChunks, chunk = tid % kChunks;
#pragma unroll
  for (int pass = 0; pass < kRows / kRowsPerPass; ++pass) {
    const int row = row0 + pass * kRowsPerPass;
    if constexpr (kRowsPerPass % 8 == 0) {
      copy(row, chunk,
           tile + device::swizzled_offset<kRowBytes>(row0 / 8 + pass * kRowsPerPass / 8, row0 % 8,
                                                     chunk));
    } else {
      copy(row, chunk, tile + device::swizzled_offset<kRowBytes>(row / 8, row % 8, chunk));
    }
  }
}

}  // namespace sageattn::detail
