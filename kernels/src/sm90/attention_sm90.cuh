// The Hopper attention kernel (sm_90a): INT8 Q·Kᵀ and FP8 e4m3 (fp8_sm90) or 16-bit
// (fp16_sm90) P·V on wgmma, tiles brought by the bulk tensor copy engine (TMA),
// warp-specialised.
//
// A CTA owns kBlockM = 64 · kConsumers query rows of one (batch, head) and has 1 + kConsumers
// warpgroups (kConsumers = 2, or 3 or 4 where the registers allow it: tile_policy.h's
// sm90_consumer_warpgroups):
//   producer  (warpgroup 0, 24 registers): one thread issues TMA copies of K and V tiles of
//             kBlockN keys (128; 64 with three consumers at d=128 or four at d=64) into a ring of
//             kStages shared-memory stages, each stage waiting until every consumer released it
//             (mbarriers `empty`);
//   consumers (240 registers with 2, 160 with 3, 112 with 4): 64 query rows each, which they first
//             quantize themselves from the caller's 16-bit Q into the Q tile (quantize/q_int8.cuh);
//             then per key block
//             S = Q·Kᵀ     wgmma m64n(kBlockN)k32 s8 (Q and K both from shared memory), int32
//             softmax      dequantized by q_scale·k_scale (exp2 domain), masked on partial and
//                          diagonal blocks only, online max/sum in FP32
//             e4m3:  O' = P·V, wgmma m64n(D+8)k32 with P from registers (the S accumulator's
//                          layout is the A fragment's, given V's keys permuted at quantization)
//                          into a fresh FP32 accumulator, added into O: two-level accumulation,
//                          because the FP8 wgmma accumulates with fewer bits than FP32
//             16-bit: O += P·V, wgmma m64n(D+8)k16 with V read as the caller laid it out
//                          (MN-major), straight into O (full FP32 accumulation)
// The P·V of block n is issued in the same turn as Q·Kᵀ of block n+1 (one tensor-core burst
// per turn), and the consumers take turns (ping-pong on named barriers), so that one's softmax
// runs while another's wgmma do.
//
// Inputs: the caller's Q (16-bit), and the workspace the quantization kernels fill
// (workspace.h): K int8 [.., unit_rows, D]; for e4m3, V transposed to [.., D, unit_rows] with keys
// permuted in groups of 32 (16-bit: the caller's V). Query rows past qo_len are quantized as
// zeros; keys past the padded length arrive from the TMA as zeros, and keys past kv_len are
// masked out of the softmax (-inf) in the one key block that crosses it (softmax.cuh, kMasked).
//
// By role: config.cuh (tile shapes, knobs, shared-memory layout), producer.cuh (the TMA loads),
// consumer.cuh (a warpgroup's turns: Q·Kᵀ, softmax.cuh, P·V), epilogue.cuh (O and the LSE),
// launch.cuh (tensor maps and the launch), trace.cuh (measurement only). This file is the kernel:
// the CTA's set-up and the one producer/consumer branch (setmaxnreg is honoured only there).
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <type_traits>

#include "../common/attention_launch.h"
#include "../common/mask.h"
#include "../quantize/q_int8.cuh"
#include "config.cuh"
#include "consumer.cuh"
#include "hopper_primitives.cuh"
#include "producer.cuh"
#include "trace.cuh"

namespace sageattn::detail {

template <int D, typename PvT, int kConsumers, bool kVarlen>
__global__ void __launch_bounds__(Sm90Config<D, PvT, kConsumers>::kThreads, 1)
    attention_sm90_kernel(const __grid_constant__ Sm90Args args) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = Sm90Config<D, PvT, kConsumers, kVarlen>;
  constexpr int kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  const AttentionArgs& a = args.a;

#if SAGEATTN_SM90_TRACE
  const int cta_id = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  SM90_CTA_STAMP(threadIdx.x == 0, kCtaEntry);
  if (threadIdx.x == 0 && cta_id < kTraceCtas) g_sm90_cta[cta_id][kCtaStamps] = sm_id();
#endif
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - sm90::smem_address(smem_raw) % 1024) % 1024);
  unsigned char* s_q = smem + Cfg::kQOffset;
  unsigned char* s_k = smem + Cfg::kKOffset;
  unsigned char* s_v = smem + Cfg::kVOffset;
  auto* barriers = reinterpret_cast<std::uint64_t*>(smem + Cfg::kBarrierOffset);
  std::uint64_t* k_full = barriers;
  std::uint64_t* v_full = k_full + kStages;
  std::uint64_t* empty = v_full + kStages;
  // [kStages][kScaleGroups]
  float* s_kscale = reinterpret_cast<float*>(smem + Cfg::kKScaleOffset);

  // Longest rows first where the mask gives the last rows the most key blocks.
  const int m_block = KeyMask::last_rows_longest(a.mask) ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int head = blockIdx.y, batch = blockIdx.z;
  const int kv_head = head / (a.heads_q / a.heads_kv);
  const int m0 = m_block * kBlockM;
  // The sharp-tile kernel after this one may be scheduled as this grid's last CTAs run (it
  // waits for them before it reads the worklist): sharp_redo.cuh.
  if (a.sharp_count != nullptr) device::launch_dependents();
  const AttentionSequence<kVarlen> seq(a, batch, kv_head);
  // A varlen sequence shorter than the grid's tiles (a dense call's grid covers its rows).
  if (kVarlen && m0 >= seq.q_len) return;
  const KeyMask mask = KeyMask::of_sequence(a.mask, seq.q_len, seq.kv_len);
  const int n_blocks = mask.key_blocks(kBlockN, m0 + kBlockM - 1);
  // Key blocks before n_unmasked need no mask (common/mask.h).
  const int n_unmasked = mask.unmasked_key_blocks(n_blocks, kBlockN, m0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // A consumer warp's 16 query rows (warp 4 + 4·wg + w: rows m0 + 64·wg + 16·w ..; thread rows
  // g, g + 8), requested before anything else: their DRAM latency then overlaps the set-up
  // below, as the TMA of an INT8 Q issued at set-up did (kernels/NOTES.md, sm90-q-in-kernel).
  const int warp_row0 = m0 + 16 * (warp - 4);
  uint4 q_raw[kQLoads<D, 16>];
  if (warp >= 4) load_q_rows<D, 16>(a, seq, head, warp_row0, lane, q_raw);
  const float* k_scales = seq.k_scales(a);

  const int first_round = min(kStages, n_blocks);  // blocks whose stages start free
  const Sm90Cta<kVarlen> cta {
    args, smem, s_q, s_k, s_v, k_full, v_full, empty, s_kscale, head, batch, kv_head, seq, mask,
        n_blocks, n_unmasked, first_round, warp, lane, warp_row0, k_scales,
#if SAGEATTN_SM90_TRACE
        cta_id
#else
        0
#endif
  };
  auto load_kv = [&](int nb) { sm90_load_kv<Cfg>(cta, nb); };
  if (threadIdx.x == 0) {  // the producer thread (warp 0, lane 0)
    sm90::prefetch_tensor_map(&args.k_map);
    sm90::prefetch_tensor_map(&args.v_map);
    for (int s = 0; s < kStages; ++s) {
      // Two arrivals: the TMA's (with K's bytes) and the producer's once K's scales are staged.
      sm90::mbarrier_init(&k_full[s], 2);
      sm90::mbarrier_init(&v_full[s], 1);
      sm90::mbarrier_init(&empty[s], Cfg::kConsumers * 4);  // every consumer warp releases
    }
    sm90::fence_barrier_init();
    // The first round of K and V is requested now, so that its latency overlaps the set-up
    // below and the CTA-wide barrier (a tile takes longer to arrive than the set-up takes:
    // kernels/NOTES.md, sm90-epilogue-factors-early).
    for (int nb = 0; nb < first_round; ++nb)
      load_kv(nb);
  }
  // The ones rows of every V stage (e4m3 1.0 = 0x38; all equal, so the swizzle does not
  // matter). The tensor cores read them through the async proxy: fence before the barrier.
  if constexpr (Cfg::kPv8) {
    for (int i = threadIdx.x; i < kStages * 8 * kBlockN / 16; i += Cfg::kThreads) {
      const int stage = i / (8 * kBlockN / 16), chunk = i % (8 * kBlockN / 16);
      *reinterpret_cast<uint4*>(s_v + stage * Cfg::kVBytes + D * kBlockN + 16 * chunk) =
          make_uint4(0x38383838u, 0x38383838u, 0x38383838u, 0x38383838u);
    }
  } else {  // the 16-bit ones: fp16 1.0 = 0x3C00, bf16 1.0 = 0x3F80
    constexpr unsigned kOnes = std::is_same_v<PvT, half> ? 0x3C003C00u : 0x3F803F80u;
    constexpr int kChunks = Cfg::kVBoxBytes / 16;  // the block after V's channels, per stage
    for (int i = threadIdx.x; i < kStages * kChunks; i += Cfg::kThreads) {
      *reinterpret_cast<uint4*>(s_v + i / kChunks * Cfg::kVBytes + Cfg::kDv / 64 * Cfg::kVBoxBytes +
                                16 * (i % kChunks)) = make_uint4(kOnes, kOnes, kOnes, kOnes);
    }
  }
  sm90::fence_proxy_async();
  __syncthreads();
  SM90_CTA_STAMP(threadIdx.x == 0, kCtaSetUp);

  if (warp < 4) {
    sm90::release_registers<Cfg::kProducerRegisters>();
    sm90_produce<Cfg>(cta);
  } else {
    sm90::claim_registers<Cfg::kConsumerRegisters>();
    sm90_consume<Cfg>(cta, q_raw);
  }
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

}  // namespace sageattn::detail
