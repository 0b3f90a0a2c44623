// The producer warpgroup of the Hopper kernel (attention_sm90.cuh): one thread brings each key
// block's K and V tiles with the TMA into a ring of kStages shared-memory stages, and K's scales
// beside them, each stage once every consumer warp released it.
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>

#include "../common/device_primitives.cuh"
#include "../common/tile_policy.h"
#include "config.cuh"
#include "hopper_primitives.cuh"

namespace sageattn::detail {

// Block nb's K and V into stage nb % kStages, by the producer thread, once the stage is free.
template <class Cfg>
__device__ __forceinline__ void sm90_load_kv(const Sm90Cta<Cfg::kVarlen>& c, int nb) {
  constexpr int D = Cfg::kD, kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  const Sm90Args& args = c.args;
  std::uint64_t* const k_full = c.k_full;
  std::uint64_t* const v_full = c.v_full;
  unsigned char* const s_k = c.s_k;
  unsigned char* const s_v = c.s_v;
  const int kv_head = c.kv_head;
  // The workspace's copies: the sequence's unit and its rows there (sequence.h).
  const int unit = c.seq.unit, row = c.seq.unit_row0 + nb * kBlockN;
  const int stage = nb % kStages;
  if constexpr (!Cfg::kKIn) {  // (else the producer's warps write the stage's K)
    sm90::mbarrier_arrive_expect_tx(&k_full[stage], Cfg::kKBytes);
#pragma unroll
    for (int box = 0; box < D / Cfg::kQKBoxBytes; ++box) {  // one below d=256
      sm90::tma_load_3d(s_k + stage * Cfg::kKBytes + box * kBlockN * Cfg::kQKBoxBytes, &args.k_map,
                        &k_full[stage], box * Cfg::kQKBoxBytes, row, unit);
    }
  }
  sm90::mbarrier_arrive_expect_tx(&v_full[stage], Cfg::kVLoadBytes);
  if constexpr (Cfg::kPv8) {
    sm90::tma_load_3d(s_v + stage * Cfg::kVBytes, &args.v_map, &v_full[stage], row, 0, unit);
  } else {
    // The caller's V: its own rows (a varlen call's map has one batch of all the rows).
    const int key = c.seq.kv_start + nb * kBlockN;
    const int batch = Cfg::kVarlen ? 0 : c.batch;
#pragma unroll
    for (int box = 0; box < Cfg::kDv / 64; ++box) {
      sm90::tma_load_4d(s_v + stage * Cfg::kVBytes + box * Cfg::kVBoxBytes, &args.v_map,
                        &v_full[stage], 64 * box, key, kv_head, batch);
    }
  }
}

// K in the kernel: block nb's 16-bit K, as the caller laid it out, into raw stage nb % kRawStages
// (keys past kv_len arrive as zeros), by the producer thread, once the stage's last reader is done.
template <class Cfg>
__device__ __forceinline__ void sm90_load_raw_k(const Sm90Cta<Cfg::kVarlen>& c, int nb) {
  const int r = nb % Cfg::kRawStages;
  sm90::mbarrier_arrive_expect_tx(&c.raw_full[r], Cfg::kRawKBytes);
  const int key = c.seq.kv_start + nb * Cfg::kBlockN;
#pragma unroll
  for (int box = 0; box < Cfg::kD / 64; ++box) {
    sm90::tma_load_4d(c.s_raw + r * Cfg::kRawKBytes + box * Cfg::kBlockN * 128, &c.args.k_map,
                      &c.raw_full[r], 64 * box, key, c.kv_head, c.batch);
  }
}

// K in the kernel: the producer warpgroup's work after the set-up. Per key block, its 128 threads
// (D/8 per key row, 8 channels each) take the raw tile once it landed: the maxima of |k - mean|
// per scale group (from each channel's max and min, packed 16-bit), the group's scale, then each
// value as (k - mean)·127/amax rounded to nearest into the stage's INT8 K tile, swizzled as the
// TMA would have written it, and the scales beside it; thread 0 then arrives on k_full and requests
// the raw tile kRawStages blocks on. The mean: of the head's first kKInKernelMeanKeys keys, which
// every CTA of the head reads in the same order, so all of them quantize alike.
template <class Cfg, typename T, int kGroupRows>
__device__ __forceinline__ void sm90_produce_quantized_k(const Sm90Cta<Cfg::kVarlen>& c) {
  using T2 = std::conditional_t<std::is_same_v<T, half>, half2, __nv_bfloat162>;
  constexpr int D = Cfg::kD, kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  constexpr int kRaw = Cfg::kRawStages;
  constexpr int kLanes = D / 8, kRowsPerPass = 128 / kLanes;
  constexpr int kGroups = kBlockN / kGroupRows, kGroupPasses = kGroupRows / kRowsPerPass;
  static_assert(kGroupRows % kRowsPerPass == 0 && kBlockN % kGroupRows == 0);
  constexpr int kBarrier = 15;  // the producer warpgroup's named barrier (the consumers' are lower)
  // ±infinity as 16-bit pairs, the running max's and min's starts
  constexpr unsigned kMinusInf = std::is_same_v<T, half> ? 0xFC00FC00u : 0xFF80FF80u;
  constexpr unsigned kPlusInf = std::is_same_v<T, half> ? 0x7C007C00u : 0x7F807F80u;
  const AttentionArgs& a = c.args.a;
  const int tid = threadIdx.x, lane = c.lane, pw = c.warp;
  const int col8 = tid % kLanes, prow = tid / kLanes;
  const int kv_len = c.seq.kv_len, n_blocks = c.n_blocks;
  float* mean_part = reinterpret_cast<float*>(c.smem + Cfg::kProducerScratchOffset);  // [4][D]
  float* mean = mean_part + 4 * D;                                                  // [D]
  float* group_part = mean + D;  // [kScaleGroups][4]
  // Chunk col8 (16 bytes) of a raw tile's row: box col8 / 8, its 128-byte rows swizzled.
  const int raw_col = col8 / 8 * (kBlockN * 128), raw_chunk16 = col8 % 8;
  auto raw_chunk = [&](const unsigned char* raw, int row) {
    return *reinterpret_cast<const uint4*>(raw + raw_col + row * 128 +
                                           ((raw_chunk16 ^ (row % 8)) * 16));
  };
  auto mean8 = [&](float (&mu)[8]) {
    const float4* m4 = reinterpret_cast<const float4*>(mean + 8 * col8);
    const float4 m0 = m4[0], m1 = m4[1];
    mu[0] = m0.x, mu[1] = m0.y, mu[2] = m0.z, mu[3] = m0.w;
    mu[4] = m1.x, mu[5] = m1.y, mu[6] = m1.z, mu[7] = m1.w;
  };
  for (int nb = 0; nb < n_blocks; ++nb) {
    const int stage = nb % kStages, r = nb % kRaw;
    const unsigned char* raw = c.s_raw + r * Cfg::kRawKBytes;
    const int valid_rows = min(kBlockN, kv_len - nb * kBlockN);
    if (tid == 0 && nb >= kStages) {  // V, once every consumer warp released the stage
      sm90::mbarrier_wait(&c.empty[stage], ((nb / kStages) & 1) ^ 1);
      sm90_load_kv<Cfg>(c, nb);  // (the first round's at set-up)
    }
    sm90::mbarrier_wait(&c.raw_full[r], (nb / kRaw) & 1);
    if (nb == 0) {  // the mean of the first keys
      const int n = min(kKInKernelMeanKeys, kv_len);
      float sum[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll 2
      for (int i = 0; i < kKInKernelMeanKeys / kRowsPerPass; ++i) {
        const int row = prow + kRowsPerPass * i;
        float x[8];
        device::unpack_16bit_x8<T>(raw_chunk(raw, row), x);
#pragma unroll
        for (int k = 0; k < 8; ++k)
          sum[k] += row < n ? x[k] : 0.f;
      }
#pragma unroll
      for (int o = kLanes; o < 32; o *= 2) {
#pragma unroll
        for (int k = 0; k < 8; ++k)
          sum[k] += __shfl_xor_sync(0xffffffffu, sum[k], o);
      }
      if (lane < kLanes) {
#pragma unroll
        for (int k = 0; k < 8; ++k)
          mean_part[pw * D + 8 * col8 + k] = sum[k];
      }
      sm90::named_barrier_sync(kBarrier, 128);
      if (tid < D) {
        const float total = ((mean_part[tid] + mean_part[D + tid]) + mean_part[2 * D + tid]) +
                            mean_part[3 * D + tid];
        mean[tid] = a.smooth_k ? total / static_cast<float>(n) : 0.f;
      }
      sm90::named_barrier_sync(kBarrier, 128);
    }
#if SAGEATTN_SM90_K_IN_KERNEL != 2  // (2: the pipeline alone, no arithmetic: a timing ablation)
    // Pass 1: per scale group, max |k - mean| over its rows, from each channel's max and min
    // (exact: 16-bit comparisons, then one subtraction in FP32); rows past kv_len are zeros.
    // (Loops unrolled by two at most: the producer has 32 registers.)
    {
      float mu[8];
      mean8(mu);
#pragma unroll 1
      for (int grp = 0; grp < kGroups; ++grp) {
        T2 hi[4], lo[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          hi[j] = *reinterpret_cast<const T2*>(&kMinusInf);
          lo[j] = *reinterpret_cast<const T2*>(&kPlusInf);
        }
#pragma unroll 2
        for (int p = 0; p < kGroupPasses; ++p) {
          const int row = prow + kRowsPerPass * (grp * kGroupPasses + p);
          const uint4 chunk = raw_chunk(raw, row);
          const T2* v = reinterpret_cast<const T2*>(&chunk);
          const bool valid = row < valid_rows;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            hi[j] = valid ? __hmax2(hi[j], v[j]) : hi[j];
            lo[j] = valid ? __hmin2(lo[j], v[j]) : lo[j];
          }
        }
        float m = 0.f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          m = fmaxf(m, fmaxf(__low2float(hi[j]) - mu[2 * j], mu[2 * j] - __low2float(lo[j])));
          m = fmaxf(m, fmaxf(__high2float(hi[j]) - mu[2 * j + 1],
                             mu[2 * j + 1] - __high2float(lo[j])));
        }
#pragma unroll
        for (int o = 16; o > 0; o /= 2)
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        if (lane == 0) group_part[grp * 4 + pw] = m;
      }
    }
#endif
    // The stage's INT8 K (and scales) may be written once its last readers released it.
    if (nb >= kStages) sm90::mbarrier_wait(&c.empty[stage], ((nb / kStages) & 1) ^ 1);
    sm90::named_barrier_sync(kBarrier, 128);
    // Pass 2: the INT8 values and the scales.
    unsigned char* s_k = c.s_k + stage * Cfg::kKBytes;
    if (tid < Cfg::kScaleGroups) {  // one scale per 16 keys (a 64-key scale repeats)
      const float* part = group_part + tid * 16 / kGroupRows * 4;
      const float amax = fmaxf(fmaxf(part[0], part[1]), fmaxf(part[2], part[3]));
      c.s_kscale[stage * Cfg::kScaleGroups + tid] = device::int8_scale(amax, 1.f);
    }
#pragma unroll 1
    for (int grp = 0; grp < kGroups; ++grp) {
#if SAGEATTN_SM90_K_IN_KERNEL != 2
      const float* part = group_part + grp * 4;
      const float amax = fmaxf(fmaxf(part[0], part[1]), fmaxf(part[2], part[3]));
      const float inv = device::int8_inverse_scale(amax);
      float mu_inv[8];
      mean8(mu_inv);
#pragma unroll
      for (int k = 0; k < 8; ++k)
        mu_inv[k] *= inv;
#endif
#pragma unroll 2
      for (int p = 0; p < kGroupPasses; ++p) {
        const int row = prow + kRowsPerPass * (grp * kGroupPasses + p);
        uint2 q = make_uint2(0u, 0u);
#if SAGEATTN_SM90_K_IN_KERNEL != 2
        float x[8];
        device::unpack_16bit_x8<T>(raw_chunk(raw, row), x);
        q = device::quantize_int8x8_smoothed(x, inv, mu_inv);
        if (row >= valid_rows) q = make_uint2(0u, 0u);
#endif
        *reinterpret_cast<uint2*>(
            s_k + device::boxed_offset<D, Cfg::kQKBoxBytes, kBlockN>(row / 8, row % 8, col8 / 2) +
            8 * (col8 % 2)) = q;
      }
    }
    // The tensor cores read the tile through the async proxy; the barrier then orders every
    // thread's writes (and its reads of the raw tile) before thread 0's arrival and next request.
    sm90::fence_proxy_async();
    sm90::named_barrier_sync(kBarrier, 128);
    if (tid == 0) {
      sm90::mbarrier_arrive(&c.k_full[stage]);
      if (nb + kRaw < n_blocks) sm90_load_raw_k<Cfg>(c, nb + kRaw);
    }
  }
}

// The producer's work after the set-up: the first round's tiles were requested there.
template <class Cfg>
__device__ __forceinline__ void sm90_produce(const Sm90Cta<Cfg::kVarlen>& c) {
  if constexpr (Cfg::kKIn) {
    // Keys per scale: 16 or 64 (at most the block).
    constexpr int kWide = Cfg::kBlockN < 64 ? Cfg::kBlockN : 64;
    const bool wide = c.args.a.k_rows != 16;
    if (c.args.a.o_bf16) {
      if (wide) {
        sm90_produce_quantized_k<Cfg, __nv_bfloat16, kWide>(c);
      } else {
        sm90_produce_quantized_k<Cfg, __nv_bfloat16, 16>(c);
      }
    } else if (wide) {
      sm90_produce_quantized_k<Cfg, half, kWide>(c);
    } else {
      sm90_produce_quantized_k<Cfg, half, 16>(c);
    }
    return;
  }
  constexpr int kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  const AttentionArgs& a = c.args.a;
  const int warp = c.warp, lane = c.lane, first_round = c.first_round, n_blocks = c.n_blocks;
  const float* const k_scales = c.k_scales;
  float* const s_kscale = c.s_kscale;
  std::uint64_t* const k_full = c.k_full;
  std::uint64_t* const empty = c.empty;
  auto load_kv = [&](int nb) { sm90_load_kv<Cfg>(c, nb); };
  if (warp == 0 && lane == 0) {  // the first round's tiles were requested at set-up
    // Block nb's 8 K scales (one per 16-key column group; k_rows is 16 or 64, so a scale may
    // repeat) into its stage, then the producer's arrival on k_full: a consumer that saw the
    // stage's K also sees its scales. Staged here, the consumers never wait for a global
    // load: loaded by them a turn ahead, the copies ptxas made of the loaded values into
    // other registers still waited for the load in the same turn (ncu: 3.6% of the warps'
    // time at d=128 16k; kernels/NOTES.md, sm90-kscale-in-smem).
    const int k_shift = __ffs(a.k_rows) - 1;
    // The last block may reach past the rows the quantization wrote (dense: kv_pad rows).
    const int k_scale_last = c.seq.kv_rows / a.k_rows - 1;
    auto stage_kscales = [&](int nb) {
      float* dst = s_kscale + nb % kStages * Cfg::kScaleGroups;
      float scale[Cfg::kScaleGroups];  // all loads issued before the stores
#pragma unroll
      for (int grp = 0; grp < Cfg::kScaleGroups; ++grp)
        scale[grp] = k_scales[min((nb * kBlockN + 16 * grp) >> k_shift, k_scale_last)];
#pragma unroll
      for (int grp = 0; grp < Cfg::kScaleGroups; ++grp)
        dst[grp] = scale[grp];
      sm90::mbarrier_arrive(&k_full[nb % kStages]);
    };
    for (int nb = 0; nb < first_round; ++nb)
      stage_kscales(nb);
    for (int nb = first_round; nb < n_blocks; ++nb) {
      // Stage nb % kStages was last filled for block nb - kStages; its release completed
      // phase (nb / kStages - 1).
      sm90::mbarrier_wait(&empty[nb % kStages], ((nb / kStages) & 1) ^ 1);
      load_kv(nb);
      stage_kscales(nb);
    }
  }
}

}  // namespace sageattn::detail
