// The consumers' epilogue in the Hopper kernel (attention_sm90.cuh): O divided by its row sums
// (the ones columns of P·V; e4m3: with V's per-channel scales undone), written as the caller's
// 16-bit type, and the log-sum-exp of each row when asked for.
#pragma once

#include <cstdint>

#include "../common/output_row.cuh"
#include "../guard/sharp_flag.cuh"
#include "config.cuh"

namespace sageattn::detail {

// A consumer thread's rows g and g + 8 of its warp's 16 (from warp_row0): normalise, write O and
// the LSE. row_km: the warp's rows' sm_scale·(q · mean(K)), which the LSE adds back;
// q_barrier: the warpgroup's own named barrier (128 threads), for the sharp-tile vote.
template <class Cfg>
__device__ __forceinline__ void sm90_epilogue(const Sm90Cta<Cfg::kVarlen>& c,
                                              const float (&o)[Cfg::kOFloats],
                                              const float (&row_max)[2],
                                              const float2 (&col_scale)[Cfg::kD / 8],
                                              const float* row_km, int w, int g, int t,
                                              int q_barrier) {
  constexpr int D = Cfg::kD;
  const AttentionArgs& a = c.args.a;
  const int head = c.head, warp_row0 = c.warp_row0;
  const auto& seq = c.seq;
  // The ones columns: every thread holds its rows' whole sums, no shuffles needed.
  const float row_sum[2] = {o[Cfg::kDv / 2], o[Cfg::kDv / 2 + 2]};
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r)
    inv[r] = row_sum[r] > 0.f ? 1.f / row_sum[r] : 0.f;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    write_output_row<D / 8>(a, seq, head, warp_row0 + g + 8 * r, t, [&](int j) {
      if constexpr (!Cfg::kPv8) {
        return make_float2(o[4 * j + 2 * r] * inv[r], o[4 * j + 2 * r + 1] * inv[r]);
      }
      return make_float2(o[4 * j + 2 * r] * col_scale[j].x * inv[r],
                         o[4 * j + 2 * r + 1] * col_scale[j].y * inv[r]);
    });
  }
  if (a.lse != nullptr && t == 0) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = warp_row0 + g + 8 * r;
      if (row >= seq.q_len) continue;
      constexpr float kLn2 = 0.6931471805599453f;
      float value = -INFINITY;
      if (row_sum[r] > 0.f) {
        // e4m3: row_sum holds 448·sum(P)
        value = (row_max[r] + __log2f(row_sum[r]) - (Cfg::kPv8 ? kLog2Fp8Max : 0.f)) * kLn2;
        if (a.k_sum != nullptr) value += row_km[16 * w + g + 8 * r];
      }
      a.lse[seq.lse_row(a, head, row)] = Cfg::kVarlen && seq.invalid ? NAN : value;
    }
  }
  // The sharp-tile guard (sharp_tiles.h): the warpgroup's 64 rows vote on its Q barrier (free
  // since the Q tile was quantized), and its first thread appends them if any is sharp.
  if (a.sharp_count != nullptr) {
    bool sharp = false;
#pragma unroll
    for (int r = 0; r < 2; ++r)
      sharp |= sharp_row(a, seq, warp_row0 + g + 8 * r, row_max[r], Cfg::kMaxHeadroom);
    if (device::barrier_or(q_barrier, 128, sharp) && threadIdx.x % 128 == 0) {
      append_sharp_tile(a, seq, head, warp_row0 - 16 * w);
    }
  }
}

}  // namespace sageattn::detail
