// The consumers' online softmax of one S tile (exp2 domain), from Q·Kᵀ's biased INT8 scores to
// P's A fragments for the P·V wgmma: the row max and O's rescale, then per score one FFMA and an
// exp2 (MUFU, or a polynomial on the FMA pipe for some column groups: exp2_fma.h), packed as
// e4m3 (fp8_sm90) or 16-bit (fp16_sm90).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/device_primitives.cuh"
#include "../common/exp2_fma.h"
#include "../common/tile_policy.h"

namespace sageattn::detail {

// Whether column group j (of `total`) of an S tile takes the FMA pipe's exp2: `groups` of them,
// evenly spread (j where floor((j+1)·groups/total) steps).
constexpr bool exp2_on_fma(int j, int groups, int total = 16) {
  return (j + 1) * groups / total != j * groups / total;
}

// Online softmax of one 64xN S tile (N = 128, or 64) of a consumer warpgroup (exp2 domain), in
// two phases:
//   softmax_row_max  the new row max (over the integer scores per group of equal scale, 16 keys,
//                    so that unmasked tiles never convert all 64 scores first), O's rescale
//   softmax_exp2_e4m3  per element one FFMA (dequantization, minus the row max, plus log2 448
//                    so that P arrives scaled for e4m3) and ex2 (MUFU, or for kFmaExp2Groups of
//                    the 16 column groups a polynomial on the FMA pipe), packed into the e4m3 A
//                    fragments of the P·V wgmma
// The scores arrive biased by the 2^23 trick (S's accumulator starts at kSmallIntBiasBits): as
// float bits they are kSmallIntBias + s exactly, and as integers they keep their order.
// The row sums come from the tensor cores (V's ones rows). kMasked: tiles with keys past kv_len
// or above the causal diagonal; `visible(j, e)` says whether accumulator element 4j+e takes part.
// m_use: the subtracted max (0 for a row with no visible key yet, to avoid inf - inf).
// With a headroom > 0 (the 16-bit path), the subtracted max moves only when the block's exceeds
// it by more than the headroom; `moved` says whether it did for either of the thread's rows.
template <bool kMasked, int kS, int kGroups, typename Visible>
__device__ __forceinline__ void softmax_row_max(const int (&s)[kS], const float (&scale)[kGroups],
                                                float (&row_max)[2], float (&rescale)[2],
                                                float (&m_use)[2], Visible visible, float headroom,
                                                bool& moved) {
  static_assert(kS == 8 * kGroups, "a scale per 16 keys: 8 of the thread's scores");
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float m = row_max[r];
    if constexpr (kMasked) {
#pragma unroll
      for (int j = 0; j < kS / 4; ++j) {
#pragma unroll
        for (int e = 2 * r; e < 2 * r + 2; ++e) {
          if (visible(j, e)) {
            m = fmaxf(m, device::biased_score_value(s[4 * j + e]) * scale[j >> 1]);
          }
        }
      }
    } else {
      float top[kGroups];  // a tree, not a chain: the scheduler has warps to hide latency with
#pragma unroll
      for (int grp = 0; grp < kGroups; ++grp) {
        const int* q = &s[8 * grp + 2 * r];  // columns j = 2grp, 2grp+1, elements e = 2r, 2r+1
        // Biased scores order as their integers do: the largest integer is the largest score.
        top[grp] = device::biased_score_value(max(max(q[0], q[1]), max(q[4], q[5]))) * scale[grp];
      }
      m = fmaxf(m, device::max_tree(top));
    }
    m = device::quad_max(m);
    if (headroom > 0.f) {
      if (!(m > row_max[r] + headroom)) m = row_max[r];
      moved |= m != row_max[r];
    }
    m_use[r] = m == -INFINITY ? 0.f : m;
    rescale[r] = device::fast_exp2(row_max[r] - m_use[r]);
    row_max[r] = m;
  }
}

// One k-step's chunk c (32 keys) at a time: register 2·half + r of chunk c holds row g + 8r, the
// mma's k indices 16·half + 4t .. +3, which are keys 16·half + {2t, 2t+1, 8+2t, 9+2t} of the
// chunk: the S fragment's columns j = 4c + 2·half and 4c + 2·half + 1 (V's keys were permuted to
// match at quantization). (Biases made per chunk instead of all at once were slower at
// d=64.)
template <bool kMasked, int kFmaExp2Groups, typename Visible>
__device__ __forceinline__ void softmax_exp2_e4m3(const int (&s)[64], const float (&scale)[8],
                                                  const float (&m_use)[2], unsigned (&pa)[4][4],
                                                  Visible visible) {
  float bias[2][8];  // per row and scale group: -(kSmallIntBias·scale) - m + log2 448
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
      bias[r][i] = fmaf(-device::kSmallIntBias, scale[i], kLog2Fp8Max - m_use[r]);
  }
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    float p[4][4];  // columns j = 4c .. 4c+3
#pragma unroll
    for (int jj = 0; jj < 4; ++jj) {
      const int j = 4 * c + jj;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float arg = fmaf(device::biased_score(s[4 * j + e]), scale[j >> 1], bias[e >> 1][j >> 1]);
        if constexpr (kMasked) {
          if (!visible(j, e)) arg = -INFINITY;
        }
        p[jj][e] = exp2_on_fma(j, kFmaExp2Groups) ? exp2_fma(arg) : device::fast_exp2(arg);
      }
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const unsigned lo = device::pack_e4m3x2(p[2 * half][2 * r], p[2 * half][2 * r + 1]);
        const unsigned hi = device::pack_e4m3x2(p[2 * half + 1][2 * r], p[2 * half + 1][2 * r + 1]);
        pa[c][2 * half + r] = lo | (hi << 16);
      }
    }
  }
}

// The 16-bit path's P: k-step c (16 keys) of the P·V wgmma takes S's column groups j = 2c and
// 2c + 1, whose accumulator layout is the 16-bit A fragment's (register 2·(j - 2c) + r: row
// g + 8r, keys 2t, 2t + 1 of the group): no permutation of V needed. P ≤ 2^headroom.
template <bool kMasked, int kFmaExp2Groups, typename PvT, int kS, int kGroups, typename Visible>
__device__ __forceinline__ void softmax_exp2_16bit(const int (&s)[kS],
                                                   const float (&scale)[kGroups],
                                                   const float (&m_use)[2],
                                                   unsigned (&pa)[kGroups][4], Visible visible) {
  float bias[2][kGroups];  // per row and scale group: -(kSmallIntBias·scale) - m
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int i = 0; i < kGroups; ++i)
      bias[r][i] = fmaf(-device::kSmallIntBias, scale[i], -m_use[r]);
  }
#pragma unroll
  for (int c = 0; c < kGroups; ++c) {  // a k-step of 16 keys per scale group
    float p[2][4];
#pragma unroll
    for (int jj = 0; jj < 2; ++jj) {
      const int j = 2 * c + jj;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float arg =
            fmaf(device::biased_score(s[4 * j + e]), scale[j >> 1], bias[e >> 1][j >> 1]);
        p[jj][e] =
            exp2_on_fma(j, kFmaExp2Groups, 2 * kGroups) ? exp2_fma(arg) : device::fast_exp2(arg);
        // Masked: exactly 0 (exp2_fma(-inf) is 2^-126, which bf16 keeps: a row that sees no key
        // would come out as V's mean instead of zeros).
        if constexpr (kMasked) {
          if (!visible(j, e)) p[jj][e] = 0.f;
        }
      }
    }
#pragma unroll
    for (int jj = 0; jj < 2; ++jj) {
#pragma unroll
      for (int r = 0; r < 2; ++r)
        pa[c][2 * jj + r] = device::pack_16bit_x2<PvT>(p[jj][2 * r], p[jj][2 * r + 1]);
    }
  }
}

}  // namespace sageattn::detail
