// The fused queue: persistent CTAs in a cooperative launch, each slice of K or V read once into
// shared memory and held there until its unit's statistics are complete (quantize.cu's header
// says when this queue runs).
// Part of quantize.cu's one translation unit (its anonymous namespace): included there only.
#pragma once

#include "common.cuh"
#include "k_int8.cuh"
#include "statistics.cuh"
#include "v_fp8.cuh"

namespace sageattn::detail {
namespace {

// --- the fused queue: K and V read once, held in shared memory until their statistics are done --

// A slice is kJobRows<D> rows of one unit's K, or keys of its V (FP8 paths). The slices of the
// call are numbered unit by unit (per unit: its K slices, then its V slices), and CTA c of a grid
// of G takes slices c, c + G, c + 2G, ...: round i of every CTA is slices iG .. iG + G - 1. A
// slice is loaded once into a ring of kFusedSlots slots and held there until its unit's
// statistics are complete; then it is quantized from shared memory. K and V thus come from DRAM
// once, against twice in the plain queue, whose second read misses L2 (ncu: K read twice at 1k
// tokens per head too; kernels/NOTES.md, quant-fused-queue).
//
// Iteration i of a CTA: (1) issue the copies of round i + 1's slice; (2) once round i's have
// landed, add that slice's part of the statistics and publish it; (3) wait until round i - 1's
// slice has its statistic (K's mean, or V's maxima: a K slice waits for the unit's K slices
// only, a V slice for its V slices), and quantize it. The wait at that barrier therefore comes
// after this CTA's own next slice is published and while the one after is in flight
// (quant-fused-queue's version loaded, published, waited and quantized one slice at a time: every
// CTA idled at each barrier with no loads in flight). K and V in separate slices keep a slot at one
// stage, so that two CTAs share an SM on the FP8 paths too (quant-fused-pipelined); separate
// barriers for K and V halve the CTAs that meet at each, and let units twice as long take this
// queue (quant-split-barrier).
//
// Why it cannot deadlock: call a unit's K slices, or its V slices, a barrier group. When a group
// has no more slices than the grid has CTAs (the host's condition), its slices lie in at most
// two consecutive rounds, so the statistics that round i - 1's wait needs are published in
// rounds <= i; every CTA publishes round i before it waits for round i - 1, and to reach round
// i it only waited for rounds <= i - 2, published earlier. That needs every CTA resident at
// once: a cooperative launch.
constexpr int kFusedSlots = 3;
template <int D>
constexpr int kFusedSmemBytes = kFusedSlots* kStageBytes<D> + kScratchWords<D> * 4;

// A fused slice (queue.h numbers them, per barrier group of kv_jobs slices): its unit,
// K or V, and which job of kJobRows<D> rows. Per unit: its K slices, then its V slices (FP8
// paths): quant_jobs in all.
// `empty`: past its varlen sequence's region (UnitSequence::past_region): it loads, adds and
// writes nothing, and only publishes (its group's count must still complete).
struct SliceJob {
  int b, hk, unit, job;
  bool is_v, empty;
  template <int D, bool kVarlen>
  __device__ static SliceJob decode(const JobPlan& p, int round) {
    const FusedJob f = fused_job(p.kv_jobs, barrier_groups(p), static_cast<int>(gridDim.x),
                                 static_cast<int>(blockIdx.x), round);
    SliceJob s;
    s.unit = f.unit;
    s.is_v = f.is_v;
    s.job = f.job;
    s.b = s.unit / p.heads_kv;
    s.hk = s.unit % p.heads_kv;
    // (Only a slice that exists has a sequence to ask: past total_jobs, unit is past the batch.)
    const int slice = round * static_cast<int>(gridDim.x) + static_cast<int>(blockIdx.x);
    s.empty = kVarlen && slice < p.total_jobs &&
              UnitSequence<kVarlen>(p, s.b, s.hk).template past_region<D>(s.job);
    return s;
  }
};

// The thread-local part of a slice's statistic (its copies have landed: K's column sums or V's
// channel maxima), met in shared memory, then one atomic per channel, and the slice counted as
// published. Rows and keys past kv_len were zero-filled and add nothing to either statistic.
template <typename T, int D>
__device__ void slice_statistics(const JobPlan& p, const SliceJob& s, const Stage<D>& stage,
                                 float* scratch) {
  constexpr int kSubs = kThreads<D> / kThreadsPerRow<D>;  // threads per channel group of K
  const std::int64_t at = unit_offset(s.b, p.heads_kv, s.hk) * D;
  if (s.empty) {
    // Nothing to add.
  } else if (!s.is_v && p.smooth_k) {
    float* sums = scratch;  // [kSubs][D]
    static_assert(kSubs * D <= kScratchWords<D>);
    const int col = (threadIdx.x % kThreadsPerRow<D>)*8;
    float sum[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int l = 0; l < kLoadsPerThread; ++l) {
      const uint4 raw = stage.at(l);
#pragma unroll
      for (int i = 0; i < 8; ++i)
        sum[i] += element<T>(raw, i);
    }
    float* dst = sums + threadIdx.x / kThreadsPerRow<D> * D + col;
    if (channel_lane<D>(col)) {  // (idle lanes' copies were zero-filled)
      reinterpret_cast<float4*>(dst)[0] = make_float4(sum[0], sum[1], sum[2], sum[3]);
      reinterpret_cast<float4*>(dst)[1] = make_float4(sum[4], sum[5], sum[6], sum[7]);
    }
    __syncthreads();
    if (threadIdx.x < D) {
      float total = 0.f;
      for (int r = 0; r < kSubs; ++r)
        total += sums[r * D + threadIdx.x];
      atomicAdd(p.w.k_sum + at + threadIdx.x, total);
    }
  } else if (s.is_v) {
    if constexpr (kQuantizesV<D>) {
      // A warp's lanes are 8 channel groups x 4 key quads (VTasks): the maxima over the quads meet
      // through two shuffle rounds, then the quad-0 lanes write one partial per channel and row of
      // `partial`, which threads < D reduce (shared-memory atomics here stalled the queue:
      // kernels/NOTES.md, quant-fused-pipelined).
      constexpr int kPartials = VTasks<D>::kTasks / 32 / VTasks<D>::kGroupsHigh;
      static_assert(kPartials * D <= kScratchWords<D>);
      float* partial = scratch;  // [kPartials][D]
      const VTasks<D> tasks;
      const int lane = threadIdx.x % 32;
#pragma unroll
      for (int j = 0; j < VTasks<D>::kPerThread; ++j) {
        const int row = (threadIdx.x + j * kThreads<D>) / 32 / VTasks<D>::kGroupsHigh;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          float m = 0.f;
#pragma unroll
          for (int r = 0; r < 4; ++r)
            m = fmaxf(m, fabsf(element<T>(stage.at(4 * j + r), i)));
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
          if (lane < 8) partial[row * D + tasks.group[j] * 8 + i] = m;
        }
      }
      __syncthreads();
      if (threadIdx.x < D) {
        float m = partial[threadIdx.x];
#pragma unroll
        for (int r = 1; r < kPartials; ++r)
          m = fmaxf(m, partial[r * D + threadIdx.x]);
        // Non-negative floats order like their bit patterns as signed integers.
        atomicMax(reinterpret_cast<int*>(p.w.v_amax + at + threadIdx.x), __float_as_int(m));
      }
    }
  }
  if (slice_has_barrier(p, s.is_v)) publish_statistics(p, s.unit, s.is_v);
}

template <typename T, int D, bool kVarlen>
__global__ void __launch_bounds__(kThreads<D>, 512 / kThreads<D>)
    fused_quantize_kernel(const __grid_constant__ JobPlan p) {
  extern __shared__ uint4 dynamic_smem[];  // kFusedSlots stages, then the scratch
  constexpr int kStageWords = kLoadsPerThread * kThreads<D>;  // uint4 per stage
  float* scratch = reinterpret_cast<float*>(dynamic_smem + kFusedSlots * kStageWords);
  auto stage = [&](int round) {
    return Stage<D>{dynamic_smem + round % kFusedSlots * kStageWords};
  };
  // Slice r·G + c of the call's total_jobs (queue.h: fused_slice).
  auto exists = [&](int round) {
    return round * static_cast<int>(gridDim.x) + static_cast<int>(blockIdx.x) < p.total_jobs;
  };
  auto issue = [&](const SliceJob& s, int round) {
    if (s.empty) {
      // No copies: the (empty) group keeps the count of groups the waits below rely on.
    } else if (s.is_v) {
      if constexpr (kQuantizesV<D>) issue_v<T, D, kVarlen>(p, s.b, s.hk, s.job, stage(round));
    } else {
      issue_rows<T, D>(k_target<D, kVarlen>(p, s.b, s.hk), s.job, stage(round));
    }
    device::cp_async_commit();
  };
  // Each slice is decoded once, when its copies are issued, and passed on from round to round.
  SliceJob current = SliceJob::decode<D, kVarlen>(p, 0), previous = current;
  if (exists(0)) issue(current, 0);
  for (int round = 0;; ++round) {
    const bool has_this = exists(round);
    const bool has_previous = (round > 0);
    if (!has_this && !has_previous) break;
    const SliceJob next = SliceJob::decode<D, kVarlen>(p, round + 1);
    if (has_this) {
      if (exists(round + 1)) {
        issue(next, round + 1);
        device::cp_async_wait_own<1>();
      } else {
        device::cp_async_wait_own<0>();
      }
      slice_statistics<T, D>(p, current, stage(round), scratch);
    }
    if (has_previous && !previous.empty) {
      // K slices without smoothing need no statistic: no barrier (and none was published).
      const float* k_sum =
          slice_has_barrier(p, previous.is_v)
              ? wait_for_statistics<D>(p, previous.b, previous.hk, previous.is_v, scratch)
              : nullptr;
      if (previous.is_v) {
        if constexpr (kQuantizesV<D>) {
          quantize_v<T, D, kVarlen>(p, previous.b, previous.hk, previous.job, stage(round - 1),
                                    reinterpret_cast<std::uint32_t*>(scratch));
        }
      } else {
        RowsTarget k = k_target<D, kVarlen>(p, previous.b, previous.hk);
        k.k_sum = k_sum;
        quantize_rows<T, D>(k, previous.job, stage(round - 1), scratch);
      }
    }
    // The next round's copies go to the slot just quantized, and its statistics reuse the
    // scratch (V's tile).
    __syncthreads();
    if (!has_this) break;
    previous = current;
    current = next;
  }
}

}  // namespace
}  // namespace sageattn::detail
