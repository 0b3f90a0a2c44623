// The consumer warpgroups of the Hopper kernel (attention_sm90.cuh): each quantizes its 64 query
// rows into the Q tile, then takes one turn per key block (with ping-pong, in alternation with
// the other warpgroups): P·V of the previous block and Q·Kᵀ of this one on the tensor cores, then
// the softmax of S (softmax.cuh); the epilogue last (epilogue.cuh).
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <type_traits>

#include "../common/device_primitives.cuh"
#include "../common/mask.h"
#include "../quantize/q_int8.cuh"
#include "config.cuh"
#include "epilogue.cuh"
#include "hopper_primitives.cuh"
#include "softmax.cuh"
#include "trace.cuh"
#include "wgmma_ops.cuh"

namespace sageattn::detail {

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

// The epilogue's factors amax/448 of this thread's output columns 8j + 2t, 8j + 2t + 1 (V·448/amax
// undone; P's 448 is in row_sum too), for V's statistics row `stats`; e4m3 only.
template <class Cfg>
__device__ __forceinline__ void sm90_load_col_scales(const AttentionArgs& a, int stats, int t,
                                                     float2 (&col_scale)[Cfg::kD / 8]) {
  if constexpr (!Cfg::kPv8) return;  // V is not scaled
  constexpr int D = Cfg::kD;
  const float* v_amax = a.v_amax + static_cast<std::int64_t>(stats) * D;
#pragma unroll
  for (int j = 0; j < D / 8; ++j) {
    const float2 amax = *reinterpret_cast<const float2*>(v_amax + 8 * j + 2 * t);
    constexpr float kInvVMax = 1.f / fp8_v_max(PvAccum::fp32);  // the only one wgmma has
    col_scale[j] = make_float2(amax.x * kInvVMax, amax.y * kInvVMax);
  }
}

// Stage "Q": the warpgroup's 64 rows quantized by its own warps into its part of the Q tile
// (while the producer's first K and V tiles are on their way), then made visible to the wgmma
// (the async proxy) for the whole warpgroup. row_km: the warpgroup's rows of the Q auxiliaries
// (the LSE's q · mean(K)). Returns the thread's Q scale.
template <class Cfg>
__device__ __forceinline__ float sm90_quantize_q(const Sm90Cta<Cfg::kVarlen>& c,
                                                 const uint4 (&q_raw)[kQLoads<Cfg::kD, 16>], int wg,
                                                 int w, float* row_km, int q_barrier) {
  float* warp_amax = reinterpret_cast<float*>(c.smem + Cfg::kQAuxOffset) + Cfg::kBlockM + 4 * wg;
  const QTileTarget q_target{c.s_q, 64 * wg + 16 * w, row_km + 16 * w, warp_amax, w};
  float q_scales[1];
  quantize_q_rows<Cfg::kD, 16, Cfg::kQKBoxBytes>(
      c.args.a, c.seq, c.warp_row0, c.lane, q_raw, q_target,
      [&] { sm90::named_barrier_sync(q_barrier, 128); }, q_scales);
  sm90::fence_proxy_async();
  sm90::named_barrier_sync(q_barrier, 128);
  return q_scales[0];
}

// Stage "issue P·V" of the previous block, V's tile at `v_tile`: e4m3, O' = P·V into o_block
// (merged into O once landed); 16-bit, O += P·V.
template <class Cfg>
__device__ __forceinline__ void sm90_issue_pv(float (&o)[Cfg::kOFloats],
                                              float (&o_block)[Cfg::kPv8 ? Cfg::kOFloats : 1],
                                              const unsigned (&pa)[Cfg::kPvSteps][4],
                                              const unsigned char* v_tile) {
  using PvT = typename Cfg::Pv;
  // (No fence on O' before its wgmma: the first k-step overwrites it, so its old values are
  // dead; a fence would keep them alive through the softmax. S is set just before its own.)
  if constexpr (Cfg::kPv8) {
    const std::uint64_t v_desc = sm90::make_smem_desc<Cfg::kVSwizzle>(v_tile);
    sm90::wgmma_fence();
    sm90::wgmma_e4m3_rs_overwrite(o_block, pa[0], v_desc);
#pragma unroll
    for (int c = 1; c < Cfg::kPvSteps; ++c)
      sm90::wgmma_e4m3_rs(o_block, pa[c], sm90::advance_desc(v_desc, c * 32));
  } else {
    const std::uint64_t v_desc = sm90::make_smem_desc_mn128(v_tile, Cfg::kVBoxBytes);
    // O's last writes (the rescale) must come before the fence, or ptxas injects a
    // warpgroup.arrive of its own (C7519).
    sm90::fence_operands(o);
    sm90::wgmma_fence();
    if constexpr (Cfg::kDv + 8 <= 256) {  // one wgmma of N = kDv + 8
#pragma unroll
      for (int c = 0; c < Cfg::kPvSteps; ++c)  // 16 keys of 128 bytes per k-step
        wgmma_pv16<PvT>(o, pa[c], sm90::advance_desc(v_desc, c * 16 * 128));
    } else {  // d=256: channels 0-127 (boxes 0, 1), then 128-255 and the ones (boxes 2-4)
      auto& o_low = *reinterpret_cast<float(*)[64]>(&o[0]);
      auto& o_high = *reinterpret_cast<float(*)[Cfg::kOFloats - 64]>(&o[64]);
#pragma unroll
      for (int c = 0; c < Cfg::kPvSteps; ++c) {
        wgmma_pv16<PvT>(o_low, pa[c], sm90::advance_desc(v_desc, c * 16 * 128));
        wgmma_pv16<PvT>(o_high, pa[c],
                        sm90::advance_desc(v_desc, 2 * Cfg::kVBoxBytes + c * 16 * 128));
      }
    }
  }
  sm90::wgmma_commit();
}

// Stage "issue Q·Kᵀ": S = Q·Kᵀ of one key block, K's tile at `k_tile`.
template <class Cfg>
__device__ __forceinline__ void sm90_issue_qk(int (&s)[Cfg::kBlockN / 2], std::uint64_t q_desc,
                                              const unsigned char* k_tile) {
  constexpr int D = Cfg::kD, kBlockN = Cfg::kBlockN;
  const std::uint64_t k_desc = sm90::make_smem_desc<Cfg::kQKSwizzle>(k_tile);
  // S starts at the 2^23 trick's bias (0x4B400000, 1.5·2^23 as a float): the scores come out as
  // kSmallIntBias + s in float bits, so the softmax needs no integer add per score (64 fewer ALU
  // instructions per block; kernels/NOTES.md, sm90-score-bias). |s| ≤ 128²·D < 2^22: no
  // overflow, and the trick's range holds.
#pragma unroll
  for (int i = 0; i < kBlockN / 2; ++i)
    s[i] = device::kSmallIntBiasBits;
  sm90::wgmma_fence();
  sm90::wgmma_s8_ss(s, q_desc, k_desc);
#pragma unroll
  for (int ks = 1; ks < D / 32; ++ks) {
    sm90::wgmma_s8_ss(s, sm90::advance_desc(q_desc, Cfg::qk_step_offset(ks, 64)),
                      sm90::advance_desc(k_desc, Cfg::qk_step_offset(ks, kBlockN)));
  }
  sm90::wgmma_commit();
}

// Stage "merge" (e4m3): O'(nb-1) landed (every older group retired), so its stage is free
// (`stage_empty`, released by lane 0 of each warp); O = O·rescale + O'.
template <class Cfg>
__device__ __forceinline__ void sm90_merge_pv(float (&o)[Cfg::kOFloats],
                                              float (&o_block)[Cfg::kPv8 ? Cfg::kOFloats : 1],
                                              unsigned (&pa)[Cfg::kPvSteps][4],
                                              const float (&rescale_pending)[2], int lane,
                                              std::uint64_t* stage_empty) {
  sm90::fence_operands(o_block);
#pragma unroll
  for (int c = 0; c < Cfg::kPvSteps; ++c)
    sm90::fence_operands(pa[c]);
  if (lane == 0) sm90::mbarrier_arrive(stage_empty);
#pragma unroll
  for (int i = 0; i < Cfg::kOFloats; ++i)
    o[i] = fmaf(o[i], rescale_pending[(i >> 1) & 1], o_block[i]);
}

// 16-bit: P·V(nb-1) retired (after the turn's wgmma_wait): its stage is free (`stage_empty`),
// and O and P's fragments are the thread's again.
template <class Cfg>
__device__ __forceinline__ void sm90_retire_pv16(float (&o)[Cfg::kOFloats],
                                                 unsigned (&pa)[Cfg::kPvSteps][4], int lane,
                                                 std::uint64_t* stage_empty) {
  sm90::fence_operands(o);
#pragma unroll
  for (int c = 0; c < Cfg::kPvSteps; ++c)
    sm90::fence_operands(pa[c]);
  if (lane == 0) sm90::mbarrier_arrive(stage_empty);
}

// The block's K scales, staged by the producer, times the thread's Q scale: the
// dequantization of each key group.
template <class Cfg>
__device__ __forceinline__ void sm90_load_kscale(const float* staged_scales, float q_scale,
                                                 float (&kscale)[Cfg::kScaleGroups]) {
  const float4* staged = reinterpret_cast<const float4*>(staged_scales);
#pragma unroll
  for (int i = 0; i < Cfg::kScaleGroups / 4; ++i) {
    const float4 four = staged[i];
    kscale[4 * i] = four.x * q_scale;
    kscale[4 * i + 1] = four.y * q_scale;
    kscale[4 * i + 2] = four.z * q_scale;
    kscale[4 * i + 3] = four.w * q_scale;
  }
}

// Stage "softmax": S of the block whose first key is n0 into P's A fragments, the row max
// moved (its factor for O: rescale_pending on the e4m3 path, where O' is merged later; applied
// to O now on the 16-bit path, whose P·V has retired). The thread's rows are warp_row0 + g and
// + 8, its columns 2t and 2t + 1 of each n8 tile.
template <class Cfg, bool masked>
__device__ __forceinline__ void sm90_softmax(int (&s)[Cfg::kBlockN / 2],
                                             const float (&kscale)[Cfg::kScaleGroups],
                                             const KeyMask& mask, int n0, int warp_row0, int g,
                                             int t, float (&row_max)[2],
                                             float (&rescale_pending)[2], float (&o)[Cfg::kOFloats],
                                             unsigned (&pa)[Cfg::kPvSteps][4]) {
  using PvT = typename Cfg::Pv;
  sm90::fence_operands(s);
  auto visible = [&](int j, int e) {
    if constexpr (!masked) return true;
    const int key = n0 + 8 * j + 2 * t + (e & 1);
    const int row = warp_row0 + g + 8 * (e >> 1);
    return mask.visible(key, row);
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
    // O (with its row sums) is idle here (P·V(nb-1) retired): rescale it now, and only where a
    // row of the warp moved its max (almost never after the first blocks).
    if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
      for (int i = 0; i < Cfg::kOFloats; ++i)
        o[i] *= rescale_new[(i >> 1) & 1];
    }
    softmax_exp2_16bit<masked, Cfg::kFmaExp2Groups, PvT>(s, kscale, m_use, pa, visible);
  }
}

// A consumer thread's whole work after the set-up. q_raw: its warp's 16 query rows of the caller's
// Q, requested at set-up.
template <class Cfg>
__device__ __forceinline__ void sm90_consume(const Sm90Cta<Cfg::kVarlen>& c,
                                             const uint4 (&q_raw)[kQLoads<Cfg::kD, 16>]) {
  constexpr int D = Cfg::kD, kBlockN = Cfg::kBlockN;
  constexpr int kStages = Cfg::kStages;
  const AttentionArgs& a = c.args.a;
  [[maybe_unused]] const int head = c.head, batch = c.batch;  // the trace's
  const KeyMask mask = c.mask;
  const int n_blocks = c.n_blocks, n_unmasked = c.n_unmasked;
  const int warp = c.warp, lane = c.lane, warp_row0 = c.warp_row0;
#if SAGEATTN_SM90_TRACE
  const int cta_id = c.cta_id;
#endif
  const int wg = warp / 4 - 1;  // consumer warpgroup: rows m0 + 64·wg ...
  const int w = warp % 4, g = lane / 4, t = lane % 4;
  // Named barriers 1 .. kConsumers are the ping-pong's; the warpgroups' Q barriers follow them.
  float* row_km = reinterpret_cast<float*>(c.smem + Cfg::kQAuxOffset) + 64 * wg;  // its 64 rows
  const int q_barrier = 1 + Cfg::kConsumers + wg;
  const float q_scale = sm90_quantize_q<Cfg>(c, q_raw, wg, w, row_km, q_barrier);

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
  const std::uint64_t q_desc = sm90::make_smem_desc<Cfg::kQKSwizzle>(c.s_q + wg * 64 * D);

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
    if constexpr (has_qk) sm90::mbarrier_wait(&c.k_full[stage], phase);
    if constexpr (has_pv) sm90::mbarrier_wait(&c.v_full[prev_stage], prev_phase);
    if (Cfg::kPingPong) sm90::named_barrier_sync(kBarrierBase + wg, 256);
    SM90_TRACE(1);  // turn acquired
    // e4m3: O'(nb-1) = P(nb-1)·V(nb-1); 16-bit: O += P(nb-1)·V(nb-1)
    auto issue_pv = [&] { sm90_issue_pv<Cfg>(o, o_block, pa, c.s_v + prev_stage * Cfg::kVBytes); };
    auto issue_qk = [&] { sm90_issue_qk<Cfg>(s, q_desc, c.s_k + stage * Cfg::kKBytes); };
    // O'(nb-1) landed (every older group retired): its stage is free; O = O·rescale + O'.
    auto merge_pv = [&] {
      sm90::wgmma_wait<0>();
      SM90_TRACE(2);  // P·V landed
      sm90_merge_pv<Cfg>(o, o_block, pa, rescale_pending, lane, &c.empty[prev_stage]);
    };
    auto retire_pv16 = [&] { sm90_retire_pv16<Cfg>(o, pa, lane, &c.empty[prev_stage]); };
    // Warpgroup 1's last turn has no successor: its arrival would be left over.
    auto hand_over = [&] {
      if (Cfg::kPingPong && !(wg == Cfg::kConsumers - 1 && !has_qk)) {
        sm90::named_barrier_arrive(kBarrierBase + (wg + 1) % Cfg::kConsumers, 256);
      }
    };
    // P·V(nb-1) issued, landed and merged, then Q·Kᵀ(nb) issued, all in the turn. (Q·Kᵀ and
    // P·V issued together, with P·V waited for during the softmax, measured no gain:
    // kernels/NOTES.md, sm90-fa3-turn-order.)
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
      float kscale[Cfg::kScaleGroups];
      sm90_load_kscale<Cfg>(c.s_kscale + stage * Cfg::kScaleGroups, q_scale, kscale);
      sm90::wgmma_wait<0>();
      SM90_TRACE(4);  // Q·Kᵀ landed
      if constexpr (!Cfg::kPv8 && !Cfg::kPvRetiresInTurn && has_pv) retire_pv16();
      sm90_softmax<Cfg, masked>(s, kscale, mask, n0, warp_row0, g, t, row_max, rescale_pending, o,
                                pa);
    }
    SM90_TRACE(5);  // softmax done
  };
  // The epilogue's factors amax/448 of this thread's output columns (V·448/amax undone; P's
  // 448 is in row_sum too), loaded before the last turn so that their latency hides behind
  // it. (Loaded among O's stores, as they were, each load waited for the stores before it,
  // since ptxas cannot rule out that O and v_amax overlap: one L2 round trip per column
  // group, a large share of a short sequence's CTA; kernels/NOTES.md,
  // sm90-epilogue-factors-early.)
  [[maybe_unused]] float2 col_scale[D / 8];
  auto load_col_scales = [&] { sm90_load_col_scales<Cfg>(a, c.seq.stats, t, col_scale); };
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
  sm90_epilogue<Cfg>(c, o, row_max, col_scale, row_km, w, g, t, q_barrier);
  SM90_CTA_STAMP(stamper && wg < 2, kCtaEnd0 + wg);
}

}  // namespace sageattn::detail
