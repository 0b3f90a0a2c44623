// The mma.sync kernel's Q·Kᵀ stage (mma/attention.cuh): INT8 m16n8k32 with int32 accumulation,
// each K fragment read from shared memory feeding every m-tile of the warp.
#pragma once

#include "../common/device_primitives.cuh"
#include "config.cuh"

namespace sageattn::detail {

// Q's A fragments of k-step ks (32 channels) for each of the warp's m-tiles, from the shared Q
// tile into qa[.][slot].
template <class Cfg>
__device__ __forceinline__ void load_q_fragments(unsigned (&qa)[Cfg::kMTiles][Cfg::kQSlots][4],
                                                 const unsigned char* s_q, int warp, int lane,
                                                 int ks, int slot) {
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
    const int mi = lane / 8, r = lane % 8;
    const int row8 = (warp * Cfg::kRowsPerWarp + 16 * mt) / 8 + (mi & 1);
    device::ldmatrix_x4(qa[mt][slot],
                        s_q + device::swizzled_offset<Cfg::kHeadDim>(row8, r, ks * 2 + (mi >> 1)));
  }
}

// Stage "Q·Kᵀ": the block's scores S = Q·Kᵀ from the K tile sk. Q's fragments are in qa
// (Cfg::kQInRegisters: loaded once, before the first block) or read from s_q per k-step. S starts
// at the 2^23 trick's bias (device::kSmallIntBiasBits): the scores come out as the floats
// kSmallIntBias + s, with no integer add per score (kernels/NOTES.md, mma-score-bias).
template <class Cfg>
__device__ __forceinline__ void qk_scores(int (&s)[Cfg::kMTiles][Cfg::kNTiles][4],
                                          unsigned (&qa)[Cfg::kMTiles][Cfg::kQSlots][4],
                                          const unsigned char* s_q, const unsigned char* sk,
                                          int warp, int lane) {
  constexpr int D = Cfg::kHeadDim;
#pragma unroll
  for (int ks = 0; ks < D / 32; ++ks) {
    const int q_slot = Cfg::kQInRegisters ? ks : 0;
    if constexpr (!Cfg::kQInRegisters) load_q_fragments<Cfg>(qa, s_q, warp, lane, ks, 0);
#pragma unroll
    for (int jp = 0; jp < Cfg::kNTiles / 2; ++jp) {
      const int mi = lane / 8, r = lane % 8;
      unsigned b[4];
      device::ldmatrix_x4(
          b, sk + device::swizzled_offset<D>(2 * jp + (mi >> 1), r, ks * 2 + (mi & 1)));
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        if (ks == 0) {
          device::mma_s8_from(s[mt][2 * jp], qa[mt][q_slot], b[0], b[1], device::kSmallIntBiasBits);
          device::mma_s8_from(s[mt][2 * jp + 1], qa[mt][q_slot], b[2], b[3],
                              device::kSmallIntBiasBits);
        } else {
          device::mma_s8(s[mt][2 * jp], qa[mt][q_slot], b[0], b[1]);
          device::mma_s8(s[mt][2 * jp + 1], qa[mt][q_slot], b[2], b[3]);
        }
      }
    }
  }
}

}  // namespace sageattn::detail
