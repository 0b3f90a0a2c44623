// The Hopper attention kernel (sm_90a): INT8 Q·Kᵀ and FP8 e4m3 (fp8_sm90) or 16-bit
// (fp16_sm90) P·V on wgmma, tiles brought by the bulk tensor copy engine (TMA),
// warp-specialised.
//
// A CTA owns kBlockM = 64 · kConsumers query rows of one (batch, head) and has 1 + kConsumers
// warpgroups (kConsumers = 2, or 3 or 4 where the registers allow it: workspace.h's
// sm90_consumer_warpgroups):
//   producer  (warpgroup 0, 24 registers): one thread issues TMA copies of K and V tiles of
//             kBlockN keys (128; 64 with three consumers at d=128 or four at d=64) into a ring of
//             kStages shared-memory stages, each stage waiting until every consumer released it
//             (mbarriers `empty`);
//   consumers (240 registers with 2, 160 with 3, 112 with 4): 64 query rows each, which they first
//             quantize themselves from the caller's 16-bit Q into the Q tile (quantize_q.cuh);
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
// (workspace.h): K int8 [.., kv_pad, D]; for e4m3, V transposed to [.., D, kv_pad] with keys
// permuted in groups of 32 (16-bit: the caller's V). Query rows past qo_len are quantized as
// zeros; keys past the padded length arrive from the TMA as zeros, and keys past kv_len are
// masked.
#pragma once

#include <cstdint>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <type_traits>

#include "../attention_launch.h"
#include "../device_primitives.cuh"
#include "../epilogue.cuh"
#include "../exp2_fma.h"
#include "../quantize_q.cuh"
#include "../workspace.h"
#include "hopper_primitives.cuh"
#include "wgmma_ops.cuh"

// Tuning knobs (kernels/NOTES.md has what each measured): shared-memory stages of K and V, and
// ping-pong between the consumer warpgroups.
#ifndef SAGEATTN_SM90_STAGES
#define SAGEATTN_SM90_STAGES 3
#endif
#ifndef SAGEATTN_SM90_PINGPONG
#define SAGEATTN_SM90_PINGPONG 1
#endif

// How many of the 16 column groups (4 scores each per thread) of an S tile take their exp2 from
// a polynomial on the FMA pipe (exp2_fma.h) instead of the MUFU unit, spread evenly over the
// tile, per head dim: the MUFU would otherwise be as busy as the tensor cores at d=128. The best
// share moves whenever the softmax's other instructions change (kernels/NOTES.md, s14, s21).
#ifndef SAGEATTN_SM90_FMA_EXP2_D128
#define SAGEATTN_SM90_FMA_EXP2_D128 1
#endif
#ifndef SAGEATTN_SM90_FMA_EXP2_D64
#define SAGEATTN_SM90_FMA_EXP2_D64 4
#endif
// ... at d=64 with three consumer warpgroups (SAGEATTN_SM90_CONSUMERS_D64): none, the FMA pipe
// is the busier one there (s31: 0/1/2/3 groups gave fp8_sm90 16k 620/610/592/555 TOPS)
#ifndef SAGEATTN_SM90_FMA_EXP2_D64_C3
#define SAGEATTN_SM90_FMA_EXP2_D64_C3 0
#endif
// ... at d=64 with four (64-key blocks: 8 column groups)
#ifndef SAGEATTN_SM90_FMA_EXP2_D64_C4
#define SAGEATTN_SM90_FMA_EXP2_D64_C4 0
#endif

// ... at d=128 with three consumer warpgroups (16-bit P·V, 64-key blocks: 8 column groups)
#ifndef SAGEATTN_SM90_FMA_EXP2_D128_C3
#define SAGEATTN_SM90_FMA_EXP2_D128_C3 0
#endif
// Stages of the K/V ring with 64-key blocks (half the bytes per stage of 128-key ones).
#ifndef SAGEATTN_SM90_STAGES_N64
#define SAGEATTN_SM90_STAGES_N64 4
#endif

// Consumer warpgroups (workspace.h: SAGEATTN_SM90_CONSUMERS_D64, _D128 and the rule): with 3, a
// CTA owns 192 query rows, each consumer thread gets 160 registers, and a 16-bit turn retires its
// P·V before it issues Q·Kᵀ (as the e4m3 one does for its merge), so that P's fragments and the
// next S can share registers. At d=128 they fit only with 64-key blocks (S 32 registers, not 64).
// With 4 (d=64, 16-bit P·V only): 256-row tiles, 112 registers, 64-key blocks.

// 1: the first warp of each consumer warpgroup of one CTA (the middle query tile of head 0)
// stamps the SM clock at six points of every turn of the third launch into device memory; a
// one-thread kernel launched after each prints them once ("sm90trace" lines;
// kernels/tests/trace_summary.py turns them into phase durations). Not printed by the kernel
// itself: a call (printf) in it makes ptxas serialize every wgmma. Measurement only.
#ifndef SAGEATTN_SM90_TRACE
#define SAGEATTN_SM90_TRACE 0
#endif

namespace sageattn::detail {

#if SAGEATTN_SM90_TRACE
constexpr int kTraceTurns = 64;
__device__ long long g_sm90_trace[2][kTraceTurns][6];
__device__ unsigned g_sm90_trace_launch[2];
__device__ int g_sm90_trace_blocks;
__device__ bool g_sm90_trace_printed;

// The CTA timeline: for every CTA (up to kTraceCtas), the SM it ran on and SM-clock stamps at
// its milestones, so that the time a CTA spends outside its steady turns (set-up, Q's arrival,
// the first turn, the epilogue) and the gap until the next CTA starts on the same SM can be
// told apart. Printed for the CTAs of one SM.
enum CtaStamp {
  kCtaEntry,     // thread 0, first instruction
  kCtaSetUp,     // thread 0, after the barriers' set-up and __syncthreads
  kCtaQ,         // warpgroup 0 (warp 4, lane 0), its Q quantized into the tile
  kCtaFirst0,    // the first turn (Q·Kᵀ and its softmax) done, warpgroup 0
  kCtaFirst1,    // ... warpgroup 1
  kCtaLoopEnd0,  // the last turn done (the last P·V merged), warpgroup 0
  kCtaLoopEnd1,  // ... warpgroup 1
  kCtaEnd0,      // the epilogue's stores issued, warpgroup 0
  kCtaEnd1,      // ... warpgroup 1
  kCtaStamps
};
constexpr int kTraceCtas = 16384;
__device__ long long g_sm90_cta[kTraceCtas][kCtaStamps + 1];  // + the SM id

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

template <int D>
__global__ void sm90_trace_print(int ctas) {
  if (g_sm90_trace_launch[0] < 3 || g_sm90_trace_launch[1] < 3 || g_sm90_trace_printed) return;
  g_sm90_trace_printed = true;
  const int blocks = g_sm90_trace_blocks;
  for (int wg = 0; wg < 2; ++wg) {
    for (int i = 0; i < min(blocks + 1, kTraceTurns); ++i) {
      const long long* t = g_sm90_trace[wg][i];
      printf("sm90trace D=%d blocks=%d wg=%d turn=%d %lld %lld %lld %lld %lld %lld\n", D, blocks,
             wg, i, t[0], t[1], t[2], t[3], t[4], t[5]);
    }
  }
  const unsigned sm = g_sm90_cta[0][kCtaStamps];  // the SM of CTA 0
  for (int c = 0; c < min(ctas, kTraceCtas); ++c) {
    const long long* t = g_sm90_cta[c];
    if (t[kCtaStamps] != sm) continue;
    printf("sm90cta D=%d cta=%d sm=%u %lld %lld %lld %lld %lld %lld %lld %lld %lld\n", D, c, sm,
           t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
  }
}
#define SM90_TRACE(point)                                                     \
  do {                                                                        \
    if (tracing && nb < kTraceTurns) g_sm90_trace[wg][nb][point] = clock64(); \
  } while (0)
// A CTA-timeline stamp, by the thread that `who` names.
#define SM90_CTA_STAMP(who, stamp)                                           \
  do {                                                                       \
    if ((who) && cta_id < kTraceCtas) g_sm90_cta[cta_id][stamp] = clock64(); \
  } while (0)
#else
#define SM90_TRACE(point) \
  do {                    \
  } while (0)
#define SM90_CTA_STAMP(who, stamp) \
  do {                             \
  } while (0)
#endif

// PvT: P·V's type. __nv_fp8_e4m3 (the fp8_sm90 path): V quantized per channel, two-level FP32
// accumulation. half or __nv_bfloat16 (the fp16_sm90 path): V as the caller gave it, P in the
// same type, accumulated straight into O (16-bit wgmma accumulates in full FP32).
template <int D, typename PvT, int kConsumerWarpgroups>
struct Sm90Config {
  static_assert(D == 64 || D == 128, "head dims 64 and 128");
  static constexpr bool kPv8 = std::is_same_v<PvT, __nv_fp8_e4m3>;
  static_assert(kPv8 || std::is_same_v<PvT, half> || std::is_same_v<PvT, __nv_bfloat16>,
                "P·V in e4m3, fp16 or bf16");
  static constexpr int kConsumers = kConsumerWarpgroups;  // of 64 rows each
  static_assert(kConsumers == 2 || (kConsumers == 3 && (D == 64 || !kPv8)) ||
                    (kConsumers == 4 && D == 64 && !kPv8),
                "2, or 3 at d=64 and with 16-bit P·V at d=128, or 4 at d=64 with 16-bit P·V");
  static constexpr int kBlockM = 64 * kConsumers;
  static constexpr int kBlockN = sm90_key_block(D, kConsumers);
  static constexpr int kThreads = 128 * (1 + kConsumers);
  // 16-bit with 3 or 4 consumers: P·V(nb-1) retires inside the turn, before Q·Kᵀ(nb) is issued.
  // (At d=128, P·V and Q·Kᵀ issued together and retired after the turn measured the same:
  // kernels/NOTES.md, s33.)
  static constexpr bool kPvRetiresInTurn = !kPv8 && kConsumers >= 3;
  static constexpr int kStages = kBlockN == 64 ? SAGEATTN_SM90_STAGES_N64 : SAGEATTN_SM90_STAGES;
  static constexpr bool kPingPong = SAGEATTN_SM90_PINGPONG != 0;
  static constexpr int kFmaExp2Groups =
      D == 128 ? (kConsumers == 3 ? SAGEATTN_SM90_FMA_EXP2_D128_C3 : SAGEATTN_SM90_FMA_EXP2_D128)
      : kConsumers == 4 ? SAGEATTN_SM90_FMA_EXP2_D64_C4
      : kConsumers == 3 ? SAGEATTN_SM90_FMA_EXP2_D64_C3
                        : SAGEATTN_SM90_FMA_EXP2_D64;
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = kConsumers == 2 ? 240 : kConsumers == 3 ? 160 : 112;
  // The consumers' claim beyond the launch's allocation (64K over the threads, in steps of 8)
  // must fit in what the producer releases: setmaxnreg.inc waits for the registers the CTA's
  // setmaxnreg.dec gave back (four consumers claiming 120 each, 3,072 more than that, hung).
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  static_assert(kConsumers * (kConsumerRegisters - kLaunchRegisters) <=
                    kLaunchRegisters - kProducerRegisters,
                "the consumers' registers come from the producer's");
  // The 16-bit path's row-max headroom (workspace.h): O is rescaled only when a row's max moved
  // by more than it. The e4m3 path scales P to 448 and needs the exact max.
  static constexpr float kMaxHeadroom = kPv8 ? 0.f : kMmaMaxHeadroom;
  // Q and K rows are D int8 bytes: 128-byte rows swizzle by 128, 64-byte rows by 64.
  static constexpr int kQKSwizzle = D;
  static constexpr int kQBytes = kBlockM * D;
  static constexpr int kKBytes = kBlockN * D;
  // V, e4m3: D rows of kBlockN = 128 keys (128-byte swizzle), then 8 rows of e4m3 ones
  // (written once). V, 16-bit: kBlockN rows (keys) of D channels as the caller laid them out, in
  // D/64 boxes of 64 channels (128 swizzled bytes per key), then a further 64-channel block of
  // ones (written once). Either way P·V with N = D + 8 leaves P's row sums in the accumulator's
  // last 8 columns. (A separate N = 8 wgmma per k-step against a tile of ones measured 2-4%
  // slower at d=128: kernels/NOTES.md, s29.)
  static constexpr int kVSwizzle = kBlockN;
  static constexpr int kVRows = D + 8;
  static constexpr int kVBoxBytes = kBlockN * 128;  // 16-bit: one box of 64 channels
  static constexpr int kVLoadBytes = D * kBlockN * (kPv8 ? 1 : 2);  // what the TMA brings
  static constexpr int kVBytes = kPv8 ? kVRows * kBlockN : (D / 64 + 1) * kVBoxBytes;
  // O's accumulator registers per thread (with the row sums' 4), and P·V's k-steps per
  // key block (k = 32 for e4m3, 16 for 16-bit types).
  static constexpr int kOFloats = kVRows / 2;
  static constexpr int kPvSteps = kBlockN / (kPv8 ? 32 : 16);
  static constexpr int kQOffset = 0;
  static constexpr int kKOffset = kQOffset + kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKBytes;
  static constexpr int kBarrierOffset = kVOffset + kStages * kVBytes;
  static constexpr int kBarriers = 3 * kStages;  // k_full, v_full, empty per stage
  // K's scales of each stage's block: one per 16-key column group of the S tile (8 floats),
  // written by the producer beside the TMA's K tile.
  static constexpr int kKScaleOffset = (kBarrierOffset + kBarriers * 8 + 15) / 16 * 16;
  static constexpr int kScaleGroups = kBlockN / 16;
  static constexpr int kKScaleBytes = kStages * kScaleGroups * 4;
  // Q's quantization (quantize_q.cuh): per row sm_scale·(q · mean(K)) for the LSE, and per
  // warp its rows' max |q| (per_block scales take the warpgroup's).
  static constexpr int kQAuxOffset = kKScaleOffset + kKScaleBytes;
  static constexpr int kQAuxBytes = (kBlockM + 4 * kConsumers) * 4;
  // +1024: the dynamic shared memory base is aligned up to the swizzle pattern's 1024 bytes.
  static constexpr int kSmemBytes = kQAuxOffset + kQAuxBytes + 1024;
  static_assert(kKOffset % 1024 == 0 && kVOffset % 1024 == 0 && kKBytes % 1024 == 0 &&
                    kVBytes % 1024 == 0,
                "swizzled tiles start on 1024-byte boundaries");
};

// The kernel's one parameter: the tensor maps must live in parameter space (__grid_constant__)
// for the TMA to read them.
struct Sm90Args {
  CUtensorMap k_map, v_map;
  AttentionArgs a;
};

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
// match at quantization). (The biases made per chunk instead of all at once measured 1-3% slower
// at d=64.)
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

// The 16-bit P·V wgmma of one k-step (V MN-major, its ones block included).
template <typename PvT, int N>
__device__ __forceinline__ void wgmma_pv16(float (&o)[N], const unsigned (&a)[4],
                                           std::uint64_t v_desc) {
  if constexpr (std::is_same_v<PvT, half>) {
    sm90::wgmma_f16_rs_bmn(o, a, v_desc);
  } else {
    sm90::wgmma_bf16_rs_bmn(o, a, v_desc);
  }
}

template <int D, typename PvT, int kConsumers>
__global__ void __launch_bounds__(Sm90Config<D, PvT, kConsumers>::kThreads, 1)
    attention_sm90_kernel(const __grid_constant__ Sm90Args args) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = Sm90Config<D, PvT, kConsumers>;
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

  // Longest rows first under causal masking: they have the most key blocks.
  const int m_block = a.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int head = blockIdx.y, batch = blockIdx.z;
  const int kv_head = head / (a.heads_q / a.heads_kv);
  const int m0 = m_block * kBlockM;
  const int causal_offset = a.kv_len - a.qo_len;  // bottom-right alignment
  int n_blocks = (a.kv_len + kBlockN - 1) / kBlockN;
  if (a.causal) {
    const int last_key = m0 + kBlockM - 1 + causal_offset;
    n_blocks = last_key < 0 ? 0 : min(n_blocks, last_key / kBlockN + 1);
  }
  // Key blocks before n_unmasked need no mask: all their keys are below kv_len and, under
  // causal masking, at or left of the diagonal of the CTA's first row.
  int n_unmasked = min(n_blocks, a.kv_len / kBlockN);
  if (a.causal) n_unmasked = min(n_unmasked, max(m0 + causal_offset + 1, 0) / kBlockN);
  const int q_bh = batch * a.heads_q + head;
  const int kv_bh = batch * a.heads_kv + kv_head;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // A consumer warp's 16 query rows (warp 4 + 4·wg + w: rows m0 + 64·wg + 16·w ..; thread rows
  // g, g + 8), requested before anything else: their DRAM latency then overlaps the set-up
  // below, as the TMA of an INT8 Q issued at set-up did (kernels/NOTES.md, s37).
  const int warp_row0 = m0 + 16 * (warp - 4);
  uint4 q_raw[kQLoads<D, 16>];
  if (warp >= 4) load_q_rows<D, 16>(a, batch, head, warp_row0, lane, q_raw);
  const float* k_scales = a.k_scale + static_cast<std::int64_t>(kv_bh) * (a.kv_pad / a.k_rows);

  // Block nb's K and V into stage nb % kStages, by the producer thread, once the stage is free.
  auto load_kv = [&](int nb) {
    const int stage = nb % kStages;
    sm90::mbarrier_arrive_expect_tx(&k_full[stage], Cfg::kKBytes);
    sm90::tma_load_3d(s_k + stage * Cfg::kKBytes, &args.k_map, &k_full[stage], 0, nb * kBlockN,
                      kv_bh);
    sm90::mbarrier_arrive_expect_tx(&v_full[stage], Cfg::kVLoadBytes);
    if constexpr (Cfg::kPv8) {
      sm90::tma_load_3d(s_v + stage * Cfg::kVBytes, &args.v_map, &v_full[stage], nb * kBlockN, 0,
                        kv_bh);
    } else {
#pragma unroll
      for (int box = 0; box < D / 64; ++box) {
        sm90::tma_load_4d(s_v + stage * Cfg::kVBytes + box * Cfg::kVBoxBytes, &args.v_map,
                          &v_full[stage], 64 * box, nb * kBlockN, kv_head, batch);
      }
    }
  };
  const int first_round = min(kStages, n_blocks);  // blocks whose stages start free
  if (threadIdx.x == 0) {                          // the producer thread (warp 0, lane 0)
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
    // below and the CTA-wide barrier (CTA timeline: the set-up took ~900 cycles and a tile
    // arrived ~1,600 cycles after it).
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
      *reinterpret_cast<uint4*>(s_v + i / kChunks * Cfg::kVBytes + D / 64 * Cfg::kVBoxBytes +
                                16 * (i % kChunks)) = make_uint4(kOnes, kOnes, kOnes, kOnes);
    }
  }
  sm90::fence_proxy_async();
  __syncthreads();
  SM90_CTA_STAMP(threadIdx.x == 0, kCtaSetUp);

  if (warp < 4) {
    // ---- producer ----
    sm90::release_registers<Cfg::kProducerRegisters>();
    if (warp == 0 && lane == 0) {  // the first round's tiles were requested at set-up
      // Block nb's 8 K scales (one per 16-key column group; k_rows is 16 or 64, so a scale may
      // repeat) into its stage, then the producer's arrival on k_full: a consumer that saw the
      // stage's K also sees its scales. Staged here, the consumers never wait for a global
      // load: loaded by them a turn ahead, the copies ptxas made of the loaded values into
      // other registers still waited for the load in the same turn (ncu: 3.6% of the warps'
      // time at d=128 16k; kernels/NOTES.md, s21).
      const int k_shift = __ffs(a.k_rows) - 1;
      const int k_scale_last = a.kv_pad / a.k_rows - 1;  // the last block may reach past it
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
  } else {
    // ---- consumers ----
    // (The two roles are the branches of one if/else: ptxas honours setmaxnreg only then.)
    sm90::claim_registers<Cfg::kConsumerRegisters>();
    const int wg = warp / 4 - 1;  // consumer warpgroup: rows m0 + 64·wg ...
    const int w = warp % 4, g = lane / 4, t = lane % 4;
    // Q: the warpgroup's 64 rows quantized by its own warps into its part of the Q tile (while
    // the producer's first K and V tiles are on their way), then made visible to the wgmma
    // (the async proxy) for the whole warpgroup. Named barriers 1 .. kConsumers are the
    // ping-pong's; the warpgroups' Q barriers follow them.
    float* q_aux = reinterpret_cast<float*>(smem + Cfg::kQAuxOffset);
    float* row_km = q_aux + 64 * wg;  // [64]: the warpgroup's rows
    float* warp_amax = q_aux + kBlockM + 4 * wg;
    const int q_barrier = 1 + Cfg::kConsumers + wg;
    const QTileTarget q_target{s_q, 64 * wg + 16 * w, row_km + 16 * w, warp_amax, w};
    float q_scales[1];
    quantize_q_rows<D, 16>(
        a, kv_bh, warp_row0, lane, q_raw, q_target,
        [&] { sm90::named_barrier_sync(q_barrier, 128); }, q_scales);
    const float q_scale = q_scales[0];
    sm90::fence_proxy_async();
    sm90::named_barrier_sync(q_barrier, 128);

    // O, FP32, relative to the row max of the last merged block; o[D/2 + 2r] is row r's sum of
    // P (e4m3: of 448·P; the ones columns).
    float o[Cfg::kOFloats];
    [[maybe_unused]] float o_block[Cfg::kPv8 ? Cfg::kOFloats : 1];  // e4m3: one block's P·V
#pragma unroll
    for (int i = 0; i < Cfg::kOFloats; ++i)
      o[i] = 0.f;
    float row_max[2] = {-INFINITY, -INFINITY};
    float rescale_pending[2] = {1.f, 1.f};  // e4m3: O's factor for the block whose P·V is in flight
    unsigned pa[Cfg::kPvSteps][4];          // P of the previous block as A fragments
    int s[kBlockN / 2];

    [[maybe_unused]] const bool stamper = threadIdx.x % 128 == 0;  // the warpgroup's thread 0
    SM90_CTA_STAMP(stamper && wg == 0, kCtaQ);
    const std::uint64_t q_desc = sm90::make_smem_desc<Cfg::kQKSwizzle>(s_q + wg * 64 * D);

    // Turn nb runs O'(nb-1) = P(nb-1)·V(nb-1) and S(nb) = Q·K(nb)ᵀ back to back, then the
    // softmax of S(nb): the P·V lags one block so that each warpgroup's tensor-core work comes
    // in one burst. With ping-pong (kPingPong) the two consumer warpgroups take turns (named
    // barriers 1 and 2), so one's softmax runs during the other's burst, instead of both
    // softmaxes at once with the tensor cores idle.
    constexpr int kBarrierBase = 1;  // 0 is __syncthreads
    if (Cfg::kPingPong && wg == Cfg::kConsumers - 1 && n_blocks > 0) {
      sm90::named_barrier_arrive(kBarrierBase + 0, 256);  // warpgroup 0 issues first
    }
#if SAGEATTN_SM90_TRACE
    bool tracing =
        w == 0 && lane == 0 && blockIdx.x == gridDim.x / 2 && head == 0 && batch == 0 && wg < 2;
    if (tracing) tracing = atomicAdd(&g_sm90_trace_launch[wg], 1u) == 2;
    if (tracing) g_sm90_trace_blocks = n_blocks;
#endif

    // Turn nb of 0 .. n_blocks. has_pv, has_qk and masked are compile-time
    // (std::bool_constant): the first turn has no P·V, the last no Q·Kᵀ, and masked tiles (keys
    // past kv_len, the causal diagonal) are the last ones, so they are peeled off the loop and no
    // branch lies between a wgmma's issue and its wait: where ptxas cannot tell which group a
    // wait retired, it serializes every wgmma (C7514).
    auto turn = [&](int nb, auto has_pv_c, auto has_qk_c, auto masked_c)
        __attribute__((always_inline)) {
      constexpr bool has_pv = decltype(has_pv_c)::value, has_qk = decltype(has_qk_c)::value;
      constexpr bool masked = decltype(masked_c)::value;
      SM90_TRACE(0);  // turn requested: waits for K/V and for the other warpgroup follow
      const int stage = nb % kStages, prev_stage = (nb + kStages - 1) % kStages;
      const unsigned phase = (nb / kStages) & 1, prev_phase = ((nb - 1) / kStages) & 1;
      if constexpr (has_qk) sm90::mbarrier_wait(&k_full[stage], phase);
      if constexpr (has_pv) sm90::mbarrier_wait(&v_full[prev_stage], prev_phase);
      if (Cfg::kPingPong) sm90::named_barrier_sync(kBarrierBase + wg, 256);
      SM90_TRACE(1);  // turn acquired
      // (No fence on O' before its wgmma: the first k-step overwrites it, so its old values are
      // dead; a fence would keep them alive through the softmax. S is set just before its own.)
      auto issue_pv = [&] {  // e4m3: O'(nb-1) = P(nb-1)·V(nb-1); 16-bit: O += P(nb-1)·V(nb-1)
        if constexpr (Cfg::kPv8) {
          const std::uint64_t v_desc =
              sm90::make_smem_desc<Cfg::kVSwizzle>(s_v + prev_stage * Cfg::kVBytes);
          sm90::wgmma_fence();
          sm90::wgmma_e4m3_rs_overwrite(o_block, pa[0], v_desc);
#pragma unroll
          for (int c = 1; c < Cfg::kPvSteps; ++c)
            sm90::wgmma_e4m3_rs(o_block, pa[c], sm90::advance_desc(v_desc, c * 32));
        } else {
          const std::uint64_t v_desc =
              sm90::make_smem_desc_mn128(s_v + prev_stage * Cfg::kVBytes, Cfg::kVBoxBytes);
          // O's last writes (the rescale) must come before the fence, or ptxas injects a
          // warpgroup.arrive of its own (C7519).
          sm90::fence_operands(o);
          sm90::wgmma_fence();
#pragma unroll
          for (int c = 0; c < Cfg::kPvSteps; ++c)  // 16 keys of 128 bytes per k-step
            wgmma_pv16<PvT>(o, pa[c], sm90::advance_desc(v_desc, c * 16 * 128));
        }
        sm90::wgmma_commit();
      };
      auto issue_qk = [&] {  // S(nb) = Q·K(nb)ᵀ
        const std::uint64_t k_desc =
            sm90::make_smem_desc<Cfg::kQKSwizzle>(s_k + stage * Cfg::kKBytes);
        // S starts at the 2^23 trick's bias (0x4B400000, 1.5·2^23 as a float): the scores come
        // out as kSmallIntBias + s in float bits, so the softmax needs no integer add per score
        // (64 fewer ALU instructions per block; kernels/NOTES.md, s22). |s| ≤ 128²·D < 2^22: no
        // overflow, and the trick's range holds.
#pragma unroll
        for (int i = 0; i < kBlockN / 2; ++i)
          s[i] = device::kSmallIntBiasBits;
        sm90::wgmma_fence();
        sm90::wgmma_s8_ss(s, q_desc, k_desc);
#pragma unroll
        for (int ks = 1; ks < D / 32; ++ks) {
          sm90::wgmma_s8_ss(s, sm90::advance_desc(q_desc, ks * 32),
                            sm90::advance_desc(k_desc, ks * 32));
        }
        sm90::wgmma_commit();
      };
      // O'(nb-1) landed (every older group retired): its stage is free; O = O·rescale + O'.
      auto merge_pv = [&] {
        sm90::wgmma_wait<0>();
        SM90_TRACE(2);  // P·V landed
        sm90::fence_operands(o_block);
#pragma unroll
        for (int c = 0; c < Cfg::kPvSteps; ++c)
          sm90::fence_operands(pa[c]);
        if (lane == 0) sm90::mbarrier_arrive(&empty[prev_stage]);
#pragma unroll
        for (int i = 0; i < Cfg::kOFloats; ++i)
          o[i] = fmaf(o[i], rescale_pending[(i >> 1) & 1], o_block[i]);
      };
      // 16-bit: P·V(nb-1) retired (after the turn's wgmma_wait): its stage is free, and O and P's
      // fragments are the thread's again.
      auto retire_pv16 = [&] {
        sm90::fence_operands(o);
#pragma unroll
        for (int c = 0; c < Cfg::kPvSteps; ++c)
          sm90::fence_operands(pa[c]);
        if (lane == 0) sm90::mbarrier_arrive(&empty[prev_stage]);
      };
      // Warpgroup 1's last turn has no successor: its arrival would be left over.
      auto hand_over = [&] {
        if (Cfg::kPingPong && !(wg == Cfg::kConsumers - 1 && !has_qk)) {
          sm90::named_barrier_arrive(kBarrierBase + (wg + 1) % Cfg::kConsumers, 256);
        }
      };
      // P·V(nb-1) issued, landed and merged, then Q·Kᵀ(nb) issued, all in the turn. (Q·Kᵀ and
      // P·V issued together, with P·V waited for during the softmax, measured no gain:
      // kernels/NOTES.md, s18.)
      // 16-bit: nothing to merge; P·V(nb-1) and Q·Kᵀ(nb) go out together and retire together.
      if constexpr (has_pv) {
        issue_pv();
        if constexpr (Cfg::kPv8) merge_pv();
        if constexpr (Cfg::kPvRetiresInTurn) {
          sm90::wgmma_wait<0>();
          retire_pv16();
        }
      }
      if constexpr (has_qk) issue_qk();
      hand_over();
      SM90_TRACE(3);  // products issued, turn handed over
      if constexpr (!Cfg::kPv8 && !Cfg::kPvRetiresInTurn && has_pv && !has_qk) {
        sm90::wgmma_wait<0>();
        retire_pv16();
      }
      if constexpr (has_qk) {
        const int n0 = nb * kBlockN;
        // K's scales, staged by the producer (read after the Q·Kᵀ was issued: the wgmma
        // covers the shared-memory latency).
        const float4* staged =
            reinterpret_cast<const float4*>(s_kscale + stage * Cfg::kScaleGroups);
        float kscale[Cfg::kScaleGroups];
#pragma unroll
        for (int i = 0; i < Cfg::kScaleGroups / 4; ++i) {
          const float4 four = staged[i];
          kscale[4 * i] = four.x * q_scale;
          kscale[4 * i + 1] = four.y * q_scale;
          kscale[4 * i + 2] = four.z * q_scale;
          kscale[4 * i + 3] = four.w * q_scale;
        }
        sm90::wgmma_wait<0>();
        SM90_TRACE(4);  // Q·Kᵀ landed
        if constexpr (!Cfg::kPv8 && !Cfg::kPvRetiresInTurn && has_pv) retire_pv16();
        // ---- softmax of S(nb) into P(nb)'s A fragments ----
        sm90::fence_operands(s);
        auto visible = [&](int j, int e) {
          if constexpr (!masked) return true;
          const int key = n0 + 8 * j + 2 * t + (e & 1);
          const int row = warp_row0 + g + 8 * (e >> 1);
          return key < a.kv_len && !(a.causal && key > row + causal_offset);
        };
        float rescale_new[2], m_use[2];
        bool moved = false;
        softmax_row_max<masked>(s, kscale, row_max, rescale_new, m_use, visible, Cfg::kMaxHeadroom,
                                moved);
        if constexpr (Cfg::kPv8) {
          softmax_exp2_e4m3<masked, Cfg::kFmaExp2Groups>(s, kscale, m_use, pa, visible);
          rescale_pending[0] = rescale_new[0];
          rescale_pending[1] = rescale_new[1];
        } else {
          // O (with its row sums) is idle here (P·V(nb-1) retired): rescale it now, and only
          // where a row of the warp moved its max (almost never after the first blocks).
          if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
            for (int i = 0; i < Cfg::kOFloats; ++i)
              o[i] *= rescale_new[(i >> 1) & 1];
          }
          softmax_exp2_16bit<masked, Cfg::kFmaExp2Groups, PvT>(s, kscale, m_use, pa, visible);
        }
      }
      SM90_TRACE(5);  // softmax done
    };
    // The epilogue's factors amax/448 of this thread's output columns (V·448/amax undone; P's
    // 448 is in row_sum too), loaded before the last turn so that their latency hides behind
    // it. (Loaded among O's stores, as they were, each load waited for the stores before it,
    // since ptxas cannot rule out that O and v_amax overlap: one L2 round trip per column
    // group, ~10,000 cycles of epilogue per CTA at d=128; a third of a CTA at 1k tokens.)
    [[maybe_unused]] float2 col_scale[D / 8];
    auto load_col_scales = [&] {
      if constexpr (!Cfg::kPv8) return;  // V is not scaled
      const float* v_amax = a.v_amax + static_cast<std::int64_t>(kv_bh) * D;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        const float2 amax = *reinterpret_cast<const float2*>(v_amax + 8 * j + 2 * t);
        col_scale[j] = make_float2(amax.x * (1.f / kFp8Max), amax.y * (1.f / kFp8Max));
      }
    };
    // No turns at all when no key is visible (causal rows before the first key): the turn
    // protocol's first arrival is made only when there are turns.
    if (n_blocks > 0) {
      constexpr std::true_type yes;
      constexpr std::false_type no;
      if (n_unmasked > 0) {
        turn(0, no, yes, no);
      } else {
        turn(0, no, yes, yes);
      }
      SM90_CTA_STAMP(stamper && wg < 2, kCtaFirst0 + wg);
      int nb = 1;
      for (; nb < n_unmasked; ++nb)
        turn(nb, yes, yes, no);
      for (; nb < n_blocks; ++nb)
        turn(nb, yes, yes, yes);
      load_col_scales();
      turn(n_blocks, yes, no, no);
    } else {
      load_col_scales();
    }
    SM90_CTA_STAMP(stamper && wg < 2, kCtaLoopEnd0 + wg);

    // ---- epilogue: normalise, write O (and the LSE) ----
    // The ones columns: every thread holds its rows' whole sums, no shuffles needed.
    const float row_sum[2] = {o[D / 2], o[D / 2 + 2]};
    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r)
      inv[r] = row_sum[r] > 0.f ? 1.f / row_sum[r] : 0.f;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      write_output_row<D / 8>(a, batch, head, warp_row0 + g + 8 * r, t, [&](int j) {
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
        if (row >= a.qo_len) continue;
        constexpr float kLn2 = 0.6931471805599453f;
        float value = -INFINITY;
        if (row_sum[r] > 0.f) {
          // e4m3: row_sum holds 448·sum(P)
          value = (row_max[r] + __log2f(row_sum[r]) - (Cfg::kPv8 ? kLog2Fp8Max : 0.f)) * kLn2;
          if (a.k_sum != nullptr) value += row_km[16 * w + g + 8 * r];
        }
        a.lse[static_cast<std::int64_t>(q_bh) * a.qo_len + row] = value;
      }
    }
    SM90_CTA_STAMP(stamper && wg < 2, kCtaEnd0 + wg);
  }
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// ---- host side: tensor maps and the launch ----

// cuTensorMapEncodeTiled from the driver the runtime loaded, without linking libcuda.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A byte tensor [outer][rows][inner], contiguous, read in boxes of box_rows × box_inner.
inline bool encode_byte_tensor(CUtensorMap* map, const void* base, std::uint64_t inner,
                               std::uint64_t rows, std::uint64_t outer, unsigned box_inner,
                               unsigned box_rows, int swizzle_bytes) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {inner, rows, outer};
  const cuuint64_t strides[2] = {inner, inner * rows};  // bytes, of dims 1 and 2
  const cuuint32_t box[3] = {box_inner, box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUtensorMapSwizzle swizzle =
      swizzle_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(base), dims, strides, box,
                element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The caller's 16-bit V [batch][heads_kv][kv_len][D] with its own strides (elements; D
// contiguous), read in boxes of 64 channels × `box_keys` keys with 128-byte swizzle. Keys past
// kv_len arrive as zeros.
inline bool encode_v16_tensor(CUtensorMap* map, const AttentionArgs& a, int batch, int d,
                              unsigned box_keys) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(a.kv_len),
                              static_cast<cuuint64_t>(a.heads_kv), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(a.v_ss) * 2,
                                 static_cast<cuuint64_t>(a.v_sh) * 2,
                                 static_cast<cuuint64_t>(a.v_sb) * 2};  // bytes, of dims 1-3
  const cuuint32_t box[4] = {64, box_keys, 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, const_cast<void*>(a.v), dims, strides, box,
                element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int D, typename PvT, int kConsumers>
cudaError_t launch_sm90_kernel(const AttentionArgs& a, int batch, cudaStream_t stream) {
  using Cfg = Sm90Config<D, PvT, kConsumers>;
  Sm90Args args{};
  args.a = a;
  const std::uint64_t kv_heads = static_cast<std::uint64_t>(batch) * a.heads_kv;
  bool encoded =
      encode_byte_tensor(&args.k_map, a.k, D, a.kv_pad, kv_heads, D, Cfg::kBlockN, Cfg::kQKSwizzle);
  if constexpr (Cfg::kPv8) {
    encoded = encoded && encode_byte_tensor(&args.v_map, a.v_fp8, a.kv_pad, D, kv_heads,
                                            Cfg::kBlockN, D, Cfg::kVSwizzle);
  } else {
    encoded = encoded && encode_v16_tensor(&args.v_map, a, batch, D, Cfg::kBlockN);
  }
  if (!encoded) return cudaErrorNotSupported;
  auto kernel = attention_sm90_kernel<D, PvT, kConsumers>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Cfg::kSmemBytes)) {
    return e;
  }
  const dim3 grid((a.q_pad + Cfg::kBlockM - 1) / Cfg::kBlockM, a.heads_q, batch);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
#if SAGEATTN_SM90_TRACE
  sm90_trace_print<D><<<1, 1, 0, stream>>>(static_cast<int>(grid.x * grid.y * grid.z));
#endif
  return cudaGetLastError();
}

// Two, three or four consumer warpgroups, by workspace.h's rule (which the host reference
// follows).
template <int D, typename PvT>
cudaError_t launch_attention_sm90(const AttentionArgs& a, int batch, cudaStream_t stream) {
  constexpr bool kPv8 = std::is_same_v<PvT, __nv_fp8_e4m3>;
  constexpr int kKnob = D == 64 ? SAGEATTN_SM90_CONSUMERS_D64 : SAGEATTN_SM90_CONSUMERS_D128;
  if constexpr ((D == 64 || !kPv8) && kKnob != 2) {  // else the kernel of three is not built
    const PvPath path = kPv8 ? PvPath::fp8_sm90 : PvPath::fp16_sm90;
    const int consumers = sm90_consumer_warpgroups(D, path, a.causal, a.qo_len);
    if constexpr (D == 64 && !kPv8 && (kKnob == 0 || kKnob == 4)) {
      if (consumers == 4) return launch_sm90_kernel<D, PvT, 4>(a, batch, stream);
    }
    if (consumers == 3) return launch_sm90_kernel<D, PvT, 3>(a, batch, stream);
  }
  return launch_sm90_kernel<D, PvT, 2>(a, batch, stream);
}

}  // namespace sageattn::detail
