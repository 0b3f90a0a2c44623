// The mma.sync kernel's tile loads: cp.async copies of 16-byte chunks into swizzled shared
// memory (mma/attention.cuh).
#pragma once

#include <cstdint>

#include "../common/attention_launch.h"
#include "../common/attention_sequence.cuh"
#include "../common/device_primitives.cuh"
#include "config.cuh"

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

// Stage "load": key block `block`'s K tile (INT8, from the workspace) and V tile (e4m3 from the
// workspace on the fp8 path; else the caller's 16-bit V, keys past the sequence read as zeros)
// into double-buffer slot `stage`, asynchronously (the caller commits and waits).
template <class Cfg, bool kVarlen>
__device__ __forceinline__ void load_kv_block(const AttentionArgs& a,
                                              const AttentionSequence<kVarlen>& seq, int kv_head,
                                              const std::int8_t* k_base, unsigned char* s_k,
                                              unsigned char* s_v, int block, int stage, int tid) {
  constexpr int D = Cfg::kHeadDim;
  const int n0 = block * kBlockN;
  copy_tile_async<D, kBlockN>(
      s_k + stage * Cfg::kKBytes, tid, [&](int row, int chunk, unsigned char* dst) {
        device::cp_async_16(dst, k_base + static_cast<std::int64_t>(n0 + row) * D + chunk * 16,
                            true);
      });
  unsigned char* sv = s_v + stage * Cfg::kVBytes;
  if constexpr (Cfg::kPath == PvPath::fp8) {
    const std::uint8_t* v_base =
        a.v_fp8 + static_cast<std::int64_t>(seq.unit) * D * a.unit_rows + seq.unit_row0 + n0;
    copy_tile_async<kBlockN, D>(sv, tid, [&](int row, int chunk, unsigned char* dst) {
      device::cp_async_16(dst, v_base + static_cast<std::int64_t>(row) * a.unit_rows + chunk * 16,
                          true);
    });
  } else {
    using VT = typename Cfg::VType;
    const VT* v_base = static_cast<const VT*>(a.v) + seq.b * a.v_sb + kv_head * a.v_sh +
                       static_cast<std::int64_t>(seq.kv_start) * a.v_ss;
    copy_tile_async<D * 2, kBlockN>(sv, tid, [&](int row, int chunk, unsigned char* dst) {
      const int key = n0 + row;
      const bool valid = key < seq.kv_len;
      device::cp_async_16(
          dst, v_base + static_cast<std::int64_t>(valid ? key : 0) * a.v_ss + chunk * 8, valid);
    });
  }
}

}  // namespace sageattn::detail
