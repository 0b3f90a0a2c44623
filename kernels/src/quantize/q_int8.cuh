// Q quantized inside the attention kernels: each warp turns its own query rows of the caller's
// 16-bit Q into INT8 in its CTA's shared Q tile, so that Q never makes an INT8 round trip
// through memory and the quantization launch does K and V only (kernels/NOTES.md,
// sm90-q-in-kernel).
//
// The arithmetic is the quantization kernel's (device::int8_inverse_scale, int8_scale,
// quantize_int8x8: bit-identical results): one scale per 16 rows (per_warp) or per 64
// (per_block, the workspace's block), max |q| / 127 times sm_scale·log2(e), values rounded to
// nearest. The tile is written in the swizzled layout both kernels read it in (the TMA's 128- or
// 64-byte swizzle, which is device::swizzled_offset's). Rows past qo_len are zeros.
//
// Lane layout: each 16-byte load of a warp covers 32 / (D/8) whole rows (coalesced); a thread
// holds channels 8c .. 8c+7 of its rows. Rows of 12 or 24 chunks (d=96, d=192) take 16 or 32
// lanes, the last 4 or 8 of them idle (they load zeros and store nothing).
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/attention_launch.h"
#include "../common/attention_sequence.cuh"
#include "../common/device_primitives.cuh"
#include "../common/workspace.h"

namespace sageattn::detail {

template <int D>
constexpr int kQRowLanes = device::row_lanes(D);
template <int D>
constexpr bool kQIdleLanes = kQRowLanes<D> * 8 != D;
template <int D>
constexpr int kQRowsPerLoad = 32 / kQRowLanes<D>;
// 16-byte loads per thread for a warp's kRows rows.
template <int D, int kRows>
constexpr int kQLoads = kRows / kQRowsPerLoad<D>;

// The loads, to be issued as early as the kernel can (their DRAM latency then overlaps its
// set-up); rows past the sequence's queries are zeros.
template <int D, int kRows, class Sequence>
__device__ __forceinline__ void load_q_rows(const AttentionArgs& a, const Sequence& seq, int head,
                                            int warp_row0, int lane,
                                            uint4 (&raw)[kQLoads<D, kRows>]) {
  const int c = lane % kQRowLanes<D>, sub = lane / kQRowLanes<D>;
  const bool idle = kQIdleLanes<D> && 8 * c >= D;
  const auto* src = static_cast<const std::uint16_t*>(a.q16) + seq.q_row(a, head, 0) + 8 * c;
#pragma unroll
  for (int l = 0; l < kQLoads<D, kRows>; ++l) {
    const int row = warp_row0 + l * kQRowsPerLoad<D> + sub;
    raw[l] =
        row < seq.q_len && !idle
            ? __ldg(reinterpret_cast<const uint4*>(src + static_cast<std::int64_t>(row) * a.q_ss))
            : make_uint4(0u, 0u, 0u, 0u);
  }
}

// Where a warp's rows go and how it meets the other warps of a per_block scale.
struct QTileTarget {
  unsigned char* tile;  // the CTA's Q tile (D bytes per row, swizzled)
  int tile_row0;        // the warp's first row in it
  float* row_km;        // [kRows] the warp's rows' sm_scale·(q · mean(K)), when a.k_sum is set
  float* block_amax;    // shared, one float per warp of a 64-row block (per_block only)
  int warp_in_block;    // this warp's index among them
};

// The loaded rows to INT8 in the tile; scale[j] is rows 16j .. 16j+15's scale (times sm_scale·
// log2(e)). With a.k_sum (the LSE with smoothing), also sm_scale·(q · mean(K)) per row into
// target.row_km, with the sequence's mean of K. `block_sync` synchronises the warps
// of a 64-row block (it is called only for per_block scales, by every warp of the block). The
// caller makes the tile visible to whatever reads it (a barrier; for wgmma, a proxy fence too).
// kBoxBytes: the tile's layout (device::boxed_offset: the Hopper kernel's d=256 tile holds
// 128-byte boxes of 64 rows; D, one swizzled tile).
// (quantize_q_rows below picks T from the input's type.)
template <typename T, int D, int kRows, int kBoxBytes, class Sequence, typename BlockSync>
__device__ __forceinline__ void quantize_q_rows_as(const AttentionArgs& a, const Sequence& seq,
                                                   int warp_row0, int lane,
                                                   const uint4 (&raw)[kQLoads<D, kRows>],
                                                   const QTileTarget& target, BlockSync block_sync,
                                                   float (&scale)[kRows / 16]) {
  constexpr int kLoads = kQLoads<D, kRows>, kGroups = kRows / 16, kLoadsPerGroup = kLoads / kGroups;
  static_assert(kRows % 16 == 0 && 64 % kRows == 0, "16-row groups inside 64-row blocks");
  const int c = lane % kQRowLanes<D>, sub = lane / kQRowLanes<D>;
  const bool idle = kQIdleLanes<D> && 8 * c >= D;  // d=192's last 8 lanes: zeros, no stores
  float x[kLoads][8];
  float amax[kGroups];
#pragma unroll
  for (int grp = 0; grp < kGroups; ++grp) {
    amax[grp] = 0.f;
#pragma unroll
    for (int l = grp * kLoadsPerGroup; l < (grp + 1) * kLoadsPerGroup; ++l)
      amax[grp] = fmaxf(amax[grp], device::unpack_16bit_x8<T>(raw[l], x[l]));
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
      amax[grp] = fmaxf(amax[grp], __shfl_xor_sync(0xffffffffu, amax[grp], o));
  }
  if (a.q_rows != kWarpRows) {  // per_block: the 64 rows of 64 / kRows warps share a scale
    float warp_max = amax[0];
#pragma unroll
    for (int grp = 1; grp < kGroups; ++grp)
      warp_max = fmaxf(warp_max, amax[grp]);
    if (lane == 0) target.block_amax[target.warp_in_block] = warp_max;
    block_sync();
    float block_max = target.block_amax[0];
#pragma unroll
    for (int w = 1; w < 64 / kRows; ++w)
      block_max = fmaxf(block_max, target.block_amax[w]);
#pragma unroll
    for (int grp = 0; grp < kGroups; ++grp)
      amax[grp] = block_max;
  }
#pragma unroll
  for (int grp = 0; grp < kGroups; ++grp) {
    const float inv = device::int8_inverse_scale(amax[grp]);
#pragma unroll
    for (int l = grp * kLoadsPerGroup; l < (grp + 1) * kLoadsPerGroup; ++l) {
      const int row = target.tile_row0 + l * kQRowsPerLoad<D> + sub;
      if (idle) continue;
      *reinterpret_cast<uint2*>(target.tile +
                                device::boxed_offset<D, kBoxBytes, 64>(row / 8, row % 8, c / 2) +
                                8 * (c % 2)) = device::quantize_int8x8(x[l], inv);
    }
    scale[grp] = device::int8_scale(amax[grp], a.q_scale_mult);
  }
  if (a.k_sum != nullptr) {
    const float* k_sum = a.k_sum + static_cast<std::int64_t>(seq.stats) * D + 8 * c;
    const float inv_kv_len = seq.inv_kv_len(a);
    float mean[8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
      mean[i] = idle ? 0.f : __ldcg(k_sum + i) * inv_kv_len;
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      float dot = 0.f;
#pragma unroll
      for (int i = 0; i < 8; ++i)
        dot += x[l][i] * mean[i];
#pragma unroll
      for (int o = kQRowLanes<D> / 2; o > 0; o /= 2)
        dot += __shfl_xor_sync(0xffffffffu, dot, o);
      const int r = l * kQRowsPerLoad<D> + sub;
      if (c == 0) target.row_km[r] = warp_row0 + r < seq.q_len ? dot * a.sm_scale : 0.f;
    }
    __syncwarp();
  }
}

// The same for Q in the call's 16-bit type (a.o_bf16: Q, K, V and O share it).
template <int D, int kRows, int kBoxBytes = D, class Sequence, typename BlockSync>
__device__ __forceinline__ void quantize_q_rows(const AttentionArgs& a, const Sequence& seq,
                                                int warp_row0, int lane,
                                                const uint4 (&raw)[kQLoads<D, kRows>],
                                                const QTileTarget& target, BlockSync block_sync,
                                                float (&scale)[kRows / 16]) {
  if (a.o_bf16) {
    quantize_q_rows_as<__nv_bfloat16, D, kRows, kBoxBytes>(a, seq, warp_row0, lane, raw, target,
                                                           block_sync, scale);
  } else {
    quantize_q_rows_as<half, D, kRows, kBoxBytes>(a, seq, warp_row0, lane, raw, target, block_sync,
                                                  scale);
  }
}

}  // namespace sageattn::detail
