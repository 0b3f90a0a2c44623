// The mma.sync kernel's accumulation policy (mma/attention.cuh): the P·V stage, O += P·V over one
// key block, each V fragment read from shared memory feeding every m-tile, summed as the
// instantiation's accumulation (Cfg::kAccum, a PvAccum of sageattn/manifest.h) says, and O's
// rescale for the block (rescale_o_before_pv, or in the merge).
//   fp8 path:  P (×448) and V (per channel ×fp8_v_max/amax) in e4m3, m16n8k32 into a fresh
//              accumulator per key block, added into O in FP32 with O's rescale riding on the
//              add: the FP8 mma's own sums keep fewer bits than FP32 (two-level accumulation).
//              fp32: that accumulator in FP32; fp16_block: in FP16 through the FP16-accumulating
//              mma, half the registers and, on GeForce cards, twice the rate; V's smaller scale
//              keeps a block's sum (at most 64·448·2.25) inside FP16.
//   fp16 path: fp32: P in the input's 16-bit type, m16n8k16 straight into O in FP32 (O's
//              rescale is done by the caller, when a row's max moved). fp16_block: P and V in
//              FP16 (bf16 V converted as read), each key block summed by the FP16-accumulating
//              m16n8k16 and merged into O as on the fp8 path; a block whose sum leaves FP16's
//              range makes O non-finite, and its tile is computed again (sharp_flag.cuh).
#pragma once

#include <cuda_fp16.h>
#include <type_traits>

#include "../common/device_primitives.cuh"
#include "config.cuh"
#include "sageattn/sageattn.h"

namespace sageattn::detail {

// o = o·scale + the block's sum, per accumulator element (rows g and g + 8 of the thread).
__device__ __forceinline__ void merge_block_sum(float (&o)[4], const float (&scale)[2], float s0,
                                                float s1, float s2, float s3) {
  o[0] = fmaf(o[0], scale[0], s0);
  o[1] = fmaf(o[1], scale[0], s1);
  o[2] = fmaf(o[2], scale[1], s2);
  o[3] = fmaf(o[3], scale[1], s3);
}

// The same for a block's sum held in an FP16 accumulator (two words of half2, in the layout of
// the FP32 one's elements 0-1 and 2-3).
__device__ __forceinline__ void merge_block_sum(float (&o)[4], const float (&scale)[2],
                                                const unsigned (&sum)[2]) {
  const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&sum[0]));
  const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&sum[1]));
  merge_block_sum(o, scale, lo.x, lo.y, hi.x, hi.y);
}

// The accumulation's part before the block's P·V, per m-tile: where P·V sums straight into O
// (Cfg::kBlockSums false) O is rescaled now, by scale_old, when a row's subtracted max moved
// (rescale_any: the warp's vote; always, without a max headroom). Block sums rescale O in their
// merge instead.
template <class Cfg>
__device__ __forceinline__ void rescale_o_before_pv(float (&o)[Cfg::kDTiles][4],
                                                    const float (&scale_old)[2], bool rescale_any) {
  if (!Cfg::kBlockSums && (Cfg::kMaxHeadroom == 0 || __any_sync(0xffffffffu, rescale_any))) {
#pragma unroll
    for (int i = 0; i < Cfg::kDTiles; ++i) {
      o[i][0] *= scale_old[0];
      o[i][1] *= scale_old[0];
      o[i][2] *= scale_old[1];
      o[i][3] *= scale_old[1];
    }
  }
}

// Stage "P·V": O += P·V over the block in V tile sv, summed as Cfg::kAccum says (above), with
// scale_old the rows' rescale for block sums' merge.
template <class Cfg>
__device__ __forceinline__ void accumulate_pv(float (&o)[Cfg::kMTiles][Cfg::kDTiles][4],
                                              const unsigned (&pa)[Cfg::kMTiles][Cfg::kPChunks][4],
                                              const unsigned char* sv, int lane,
                                              const float (&scale_old)[Cfg::kMTiles][2]) {
  constexpr int kMTiles = Cfg::kMTiles;
  constexpr PvPath PATH = Cfg::kPath;
  constexpr PvAccum ACC = Cfg::kAccum;
  using VT = typename Cfg::VType;
  const int mi = lane / 8, r = lane % 8;
  if constexpr (PATH == PvPath::fp8) {
#pragma unroll
    for (int dt = 0; dt < Cfg::kDTiles; ++dt) {
      unsigned b[4];
      device::ldmatrix_x4(b, sv + device::swizzled_offset<kBlockN>(dt, r, mi));
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        if constexpr (ACC == PvAccum::fp16_block) {
          unsigned acc[2] = {0u, 0u};
          device::mma_e4m3_f16acc(acc, pa[mt][0], b[0], b[1]);
          device::mma_e4m3_f16acc(acc, pa[mt][1], b[2], b[3]);
          merge_block_sum(o[mt][dt], scale_old[mt], acc);
        } else {
          float acc[4] = {0.f, 0.f, 0.f, 0.f};
          device::mma_e4m3(acc, pa[mt][0], b[0], b[1]);
          device::mma_e4m3(acc, pa[mt][1], b[2], b[3]);
          merge_block_sum(o[mt][dt], scale_old[mt], acc[0], acc[1], acc[2], acc[3]);
        }
      }
    }
  } else if constexpr (ACC == PvAccum::fp16_block) {
    // Per pair of n8 output tiles, the block's four 16-key chunks of V first, then each
    // m-tile's sum over them in FP16, merged into O.
#pragma unroll
    for (int dp = 0; dp < Cfg::kDTiles / 2; ++dp) {
      unsigned b[kBlockN / 16][4];
#pragma unroll
      for (int c = 0; c < kBlockN / 16; ++c) {
        device::ldmatrix_x4_trans(b[c], sv + device::swizzled_offset<Cfg::kHeadDim * 2>(
                                                 2 * c + (mi & 1), r, 2 * dp + (mi >> 1)));
        if constexpr (!std::is_same_v<VT, half>) {
#pragma unroll
          for (int i = 0; i < 4; ++i)
            b[c][i] = device::bf16x2_to_half2(b[c][i]);
        }
      }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        unsigned lo[2] = {0u, 0u}, hi[2] = {0u, 0u};  // output tiles 2·dp and 2·dp + 1
#pragma unroll
        for (int c = 0; c < kBlockN / 16; ++c) {
          device::mma_f16_f16acc(lo, pa[mt][c], b[c][0], b[c][1]);
          device::mma_f16_f16acc(hi, pa[mt][c], b[c][2], b[c][3]);
        }
        merge_block_sum(o[mt][2 * dp], scale_old[mt], lo);
        merge_block_sum(o[mt][2 * dp + 1], scale_old[mt], hi);
      }
    }
  } else {
#pragma unroll
    for (int c = 0; c < kBlockN / 16; ++c) {
#pragma unroll
      for (int dp = 0; dp < Cfg::kDTiles / 2; ++dp) {
        unsigned b[4];
        device::ldmatrix_x4_trans(b, sv + device::swizzled_offset<Cfg::kHeadDim * 2>(
                                              2 * c + (mi & 1), r, 2 * dp + (mi >> 1)));
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          device::mma_16bit<VT>(o[mt][2 * dp], pa[mt][c], b[0], b[1]);
          device::mma_16bit<VT>(o[mt][2 * dp + 1], pa[mt][c], b[2], b[3]);
        }
      }
    }
  }
}

}  // namespace sageattn::detail
