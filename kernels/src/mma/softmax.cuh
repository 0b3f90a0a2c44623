// The mma.sync kernel's online softmax (exp2 domain): one FFMA and one ex2 per score.
//
// S·q_scale·k_scale is the logit in the exp2 domain (q_scale holds sm_scale·log2 e). The
// dequantization, the row max and (fp8 path) P's ×448 are folded into one FFMA per score:
// exp2(f·scale + bias) with f = kSmallIntBias + s as a float (S started at the bias) and
// bias = -kSmallIntBias·scale - m (+ log2 448). Keys share a K scale in groups of 16 (k_rows is
// 16 or 64), so the row max is taken over the integer scores of each group and scaled once.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>

#include "../common/device_primitives.cuh"
#include "config.cuh"
#include "pv.cuh"

namespace sageattn::detail {

// One m16 tile's step over a key block. s: its biased INT8 scores (device::kSmallIntBiasBits);
// scale[i]: the dequantization of key group i. Updates the tile's two rows per thread (row_max,
// row_sum, the running max and the sum of the unrounded P), sets scale_old to the factor their
// O rows are to be multiplied by and x to the block's P (×448 on the fp8 path). visible(j, e)
// says whether accumulator element (j, e) is a key its row may see; it is asked only on masked
// blocks (those that cross kv_len or the causal diagonal: common/mask.h). Returns whether a
// row's subtracted max moved (always false without kMaxHeadroom, where it always moves).
template <class Cfg, class Visible>
__device__ __forceinline__ bool softmax_block(const int (&s)[Cfg::kNTiles][4],
                                              const float (&scale)[Cfg::kGroups], bool masked,
                                              Visible visible, float (&row_max)[2],
                                              float (&row_sum)[2], float (&scale_old)[2],
                                              float (&x)[Cfg::kNTiles][4]) {
  constexpr int kGroups = Cfg::kGroups;
  float bias[2][kGroups];
  bool rescale_any = false;  // with kMaxHeadroom: whether a row's subtracted max moved
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float m = row_max[r];
    if (masked) {
#pragma unroll
      for (int j = 0; j < Cfg::kNTiles; ++j) {
#pragma unroll
        for (int e = 2 * r; e < 2 * r + 2; ++e)
          if (visible(j, e)) m = fmaxf(m, device::biased_score_value(s[j][e]) * scale[j / 2]);
      }
    } else {
      float top[kGroups];  // scale ≥ 0, so the largest score of a group is its largest int
#pragma unroll
      for (int i = 0; i < kGroups; ++i) {
        const int* lo = s[2 * i] + 2 * r;
        const int* hi = s[2 * i + 1] + 2 * r;
        top[i] = device::biased_score_value(max(max(lo[0], lo[1]), max(hi[0], hi[1]))) * scale[i];
      }
      m = fmaxf(m, device::max_tree(top));
    }
    m = device::quad_max(m);
    if constexpr (Cfg::kMaxHeadroom > 0) {
      // Keep subtracting the old max while the block's stays within the headroom of it (P
      // ≤ 2^headroom): then O needs no rescale, and the warp skips it (mma/attention.cuh).
      if (!(m > row_max[r] + Cfg::kMaxHeadroom)) m = row_max[r];
      rescale_any |= m != row_max[r];
    }
    // A row with no visible key yet keeps m = -inf; subtract 0 instead to avoid inf - inf.
    const float m_use = m == -INFINITY ? 0.f : m;
    scale_old[r] = device::fast_exp2(row_max[r] - m_use);
    row_max[r] = m;
#pragma unroll
    for (int i = 0; i < kGroups; ++i)
      bias[r][i] = fmaf(-device::kSmallIntBias, scale[i], Cfg::kLog2PScale - m_use);
  }
  // Row sums of the unrounded P, as the host reference, in two chains per row. Unmasked
  // blocks (all but the last and the diagonal) test nothing.
  float sum[4] = {0.f, 0.f, 0.f, 0.f};
  auto exponentiate = [&](auto masked_block) {
#pragma unroll
    for (int j = 0; j < Cfg::kNTiles; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float arg = fmaf(device::biased_score(s[j][e]), scale[j / 2], bias[e >> 1][j / 2]);
        if constexpr (decltype(masked_block)::value) {
          if (!visible(j, e)) arg = -INFINITY;
        }
        x[j][e] = device::fast_exp2(arg);
        sum[e] += x[j][e];
      }
    }
  };
  if (masked)
    exponentiate(std::true_type{});
  else
    exponentiate(std::false_type{});
#pragma unroll
  for (int r = 0; r < 2; ++r)
    row_sum[r] = row_sum[r] * scale_old[r] + (sum[2 * r] + sum[2 * r + 1]);
  return rescale_any;
}

// P packed as the P·V mma's A fragments. fp8: P's C fragment becomes the A fragment of 32-key
// chunks directly; V's keys were permuted to match when it was quantized (quantize/v_fp8.cuh,
// quad_first_key). fp16: pairs in Cfg::PType (the input's 16-bit type, or FP16 for FP16 block
// sums).
template <class Cfg>
__device__ __forceinline__ void pack_p(const float (&x)[Cfg::kNTiles][4],
                                       unsigned (&pa)[Cfg::kPChunks][4]) {
  if constexpr (Cfg::kPath == PvPath::fp8) {
#pragma unroll
    for (int c = 0; c < Cfg::kPChunks; ++c) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int j = 4 * c + 2 * half;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const unsigned lo = device::pack_e4m3x2(x[j][2 * r], x[j][2 * r + 1]);
          const unsigned hi = device::pack_e4m3x2(x[j + 1][2 * r], x[j + 1][2 * r + 1]);
          pa[c][2 * half + r] = lo | (hi << 16);
        }
      }
    }
  } else {
#pragma unroll
    for (int c = 0; c < Cfg::kPChunks; ++c) {
      pa[c][0] = device::pack_16bit_x2<typename Cfg::PType>(x[2 * c][0], x[2 * c][1]);
      pa[c][1] = device::pack_16bit_x2<typename Cfg::PType>(x[2 * c][2], x[2 * c][3]);
      pa[c][2] = device::pack_16bit_x2<typename Cfg::PType>(x[2 * c + 1][0], x[2 * c + 1][1]);
      pa[c][3] = device::pack_16bit_x2<typename Cfg::PType>(x[2 * c + 1][2], x[2 * c + 1][3]);
    }
  }
}

// Stage "softmax": the block's online softmax for each of the warp's m-tiles (softmax_block,
// with scale[i] = q_scale·k_scale of key group i), O's rescale where the accumulation does it
// before P·V (pv.cuh), and P packed m-tile by m-tile as soon as it is computed, so that only one
// m-tile's P is ever held in floats. visible(mt, j, e): whether accumulator element (j, e) of
// m-tile mt is a key its row may see (asked on masked blocks only).
template <class Cfg, class Visible>
__device__ __forceinline__ void softmax_stage(const int (&s)[Cfg::kMTiles][Cfg::kNTiles][4],
                                              const float (&q_scale)[Cfg::kMTiles],
                                              const float (&k_scale)[Cfg::kGroups], bool masked,
                                              Visible visible, float (&row_max)[Cfg::kMTiles][2],
                                              float (&row_sum)[Cfg::kMTiles][2],
                                              float (&scale_old)[Cfg::kMTiles][2],
                                              float (&o)[Cfg::kMTiles][Cfg::kDTiles][4],
                                              unsigned (&pa)[Cfg::kMTiles][Cfg::kPChunks][4]) {
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
    float scale[Cfg::kGroups];
#pragma unroll
    for (int i = 0; i < Cfg::kGroups; ++i)
      scale[i] = q_scale[mt] * k_scale[i];
    float x[Cfg::kNTiles][4];
    const bool rescale_any = softmax_block<Cfg>(
        s[mt], scale, masked, [&](int j, int e) { return visible(mt, j, e); }, row_max[mt],
        row_sum[mt], scale_old[mt], x);
    rescale_o_before_pv<Cfg>(o[mt], scale_old[mt], rescale_any);
    pack_p<Cfg>(x, pa[mt]);
  }
}

}  // namespace sageattn::detail
