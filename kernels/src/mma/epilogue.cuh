// The mma.sync kernel's epilogue (mma/attention.cuh): O normalised by the row sums and written
// in the caller's 16-bit type, the LSE, and the kernel's vote for the sharp-tile guard.
#pragma once

#include "../common/attention_launch.h"
#include "../common/attention_sequence.cuh"
#include "../common/device_primitives.cuh"
#include "../common/output_row.cuh"
#include "../guard/sharp_flag.cuh"
#include "config.cuh"

namespace sageattn::detail {

// O (kMTiles m16 tiles per warp, unnormalised) divided by the row sums and written; with
// a.lse the rows' log-sum-exp (natural log; row_km holds the K smoothing's q·mean(K) per row).
template <class Cfg, bool kVarlen>
__device__ __forceinline__ void write_attention_output(
    const AttentionArgs& a, const AttentionSequence<kVarlen>& seq, int head, int warp_row0,
    int lane, float (&o)[Cfg::kMTiles][Cfg::kDTiles][4], const float (&row_max)[Cfg::kMTiles][2],
    float (&row_sum)[Cfg::kMTiles][2], const float* row_km) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int kMTiles = Cfg::kMTiles;
  const int g = lane / 4, t = lane % 4;
  float2 col_scale[Cfg::kDTiles];
#pragma unroll
  for (int dt = 0; dt < Cfg::kDTiles; ++dt) {
    col_scale[dt] = make_float2(1.f, 1.f);
    if constexpr (Cfg::kPath == PvPath::fp8) {
      // V was scaled by fp8_v_max / amax: undo it. (P's 448 is in row_sum too, so it cancels.) Read
      // through the read-only path, which tells the compiler that the stores of O cannot change
      // it: with a plain load each waited for the stores before it, one round trip per column
      // tile (kernels/NOTES.md, the Hopper kernel's sm90-epilogue-factors-early).
      const float2 amax = __ldg(reinterpret_cast<const float2*>(
          a.v_amax + static_cast<std::int64_t>(seq.stats) * D + dt * 8 + 2 * t));
      constexpr float kInvVMax = 1.f / fp8_v_max(Cfg::kAccum);
      col_scale[dt] = make_float2(amax.x * kInvVMax, amax.y * kInvVMax);
    }
  }
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_sum[mt][r] += __shfl_xor_sync(0xffffffffu, row_sum[mt][r], 1);
      row_sum[mt][r] += __shfl_xor_sync(0xffffffffu, row_sum[mt][r], 2);
      inv[r] = row_sum[mt][r] > 0.f ? 1.f / row_sum[mt][r] : 0.f;
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      write_output_row<Cfg::kDTiles>(a, seq, head, warp_row0 + 16 * mt + g + r * 8, t, [&](int dt) {
        return make_float2(o[mt][dt][2 * r] * col_scale[dt].x * inv[r],
                           o[mt][dt][2 * r + 1] * col_scale[dt].y * inv[r]);
      });
    }
    if (a.lse != nullptr && t == 0) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = warp_row0 + 16 * mt + g + r * 8;
        if (row >= seq.q_len) continue;
        constexpr float kLn2 = 0.6931471805599453f;
        float value = -INFINITY;
        if (row_sum[mt][r] > 0.f) {
          value = (row_max[mt][r] + __log2f(row_sum[mt][r]) - Cfg::kLog2PScale) * kLn2;
          if (a.k_sum != nullptr) value += row_km[16 * mt + g + r * 8];
        }
        a.lse[seq.lse_row(a, head, row)] = kVarlen && seq.invalid ? NAN : value;
      }
    }
  }
}

// The kernel's half of the sharp-tile guard (common/sharp_tiles.h): a 64-row tile with a row
// past the limit, or (accumulation_may_overflow) with a row whose O left FP16's range in some
// block's sum, goes on the worklist; its warps vote on a named barrier of their own.
template <class Cfg, bool kVarlen>
__device__ __forceinline__ void vote_sharp_tiles(const AttentionArgs& a,
                                                 const AttentionSequence<kVarlen>& seq, int head,
                                                 int m0, int warp_row0, int tid,
                                                 const float (&row_max)[Cfg::kMTiles][2],
                                                 const float (&o)[Cfg::kMTiles][Cfg::kDTiles][4]) {
  constexpr int kMTiles = Cfg::kMTiles;
  const int g = tid % 32 / 4;
  bool sharp = false;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = warp_row0 + 16 * mt + g + 8 * r;
      sharp |= sharp_row(a, seq, row, row_max[mt][r], Cfg::kMaxHeadroom);
      if constexpr (accumulation_may_overflow(Cfg::kPath, Cfg::kAccum)) {
        // Any quad thread's columns: the vote below is the tile's OR anyway.
        float total = 0.f;
#pragma unroll
        for (int dt = 0; dt < Cfg::kDTiles; ++dt)
          total += fabsf(o[mt][dt][2 * r]) + fabsf(o[mt][dt][2 * r + 1]);
        sharp |= overflowed_row(seq, row, total);
      }
    }
  }
  // (Barrier ids as constants: a computed one makes ptxas reserve all 16 of them.)
  constexpr int kTileThreads = kSharpTileRows / Cfg::kRowsPerWarp * 32;
  const int tile = tid / kTileThreads;
  const bool any = tile == 0 ? device::barrier_or(1, kTileThreads, sharp)
                             : device::barrier_or(2, kTileThreads, sharp);
  static_assert(Cfg::kCtaRows <= 2 * kSharpTileRows, "a barrier per tile: ids 1 and 2");
  if (any && tid % kTileThreads == 0) append_sharp_tile(a, seq, head, m0 + kSharpTileRows * tile);
}

}  // namespace sageattn::detail
