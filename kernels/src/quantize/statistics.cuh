// The statistics the quantization needs before a single value: K's column sums (for its
// smoothing) and V's per-channel max |v| (for its FP8 scale), accumulated with one atomic per
// channel per job, published per unit, and waited for by the jobs that need them.
// Part of quantize.cu's one translation unit (its anonymous namespace): included there only.
#pragma once

#include "common.cuh"

namespace sageattn::detail {
namespace {

// K's column sums and V's column max |v| over kStatJobRows rows, then one atomic per channel.
// D/8 threads read a row, kThreads/(D/8) rows in flight per pass; rounds of 2 passes over K and
// 2 over V go through half of the stage each, the next round's copies in flight while a round
// is summed. The threads' partial results meet in shared memory.
template <typename T, int D, bool kVarlen>
__device__ void statistics_job(const JobPlan& p, int b, int hk, int job, const Stage<D>& stage,
                               float* scratch) {
  constexpr int kRowsInFlight = kThreads<D> / kThreadsPerRow<D>;
  constexpr int kRoundRows = 2 * kRowsInFlight;
  constexpr int kRounds = kStatJobRows<D> / kRoundRows;
  static_assert(2 * kRowsInFlight * D <= kScratchWords<D> && kLoadsPerThread == 8);
  const int col = (threadIdx.x % kThreadsPerRow<D>)*8, sub = threadIdx.x / kThreadsPerRow<D>;
  const UnitSequence<kVarlen> seq(p, b, hk);
  const int begin = job * kStatJobRows<D>, end = min(seq.len, begin + kStatJobRows<D>);
  // Past a varlen sequence's rows: nothing to add (the caller still publishes the job).
  if (kVarlen && begin >= seq.len) return;
  const int rounds = (end - begin + kRoundRows - 1) / kRoundRows;
  const T* k_src = row_ptr<T>(p.k, seq.k_offset, begin + sub) + col;
  const T* v_src = row_ptr<T>(p.v, seq.v_offset, begin + sub) + col;
  // Round r uses slots 4(r%2) .. 4(r%2)+3: two rows of K, then two of V.
  auto issue = [&](int r) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int pass = 2 * r + j;
      const bool valid = begin + pass * kRowsInFlight + sub < end && channel_lane<D>(col);
      if (p.smooth_k)
        stage.copy(4 * (r % 2) + j, k_src + pass * kRowsInFlight * p.k.ss, valid, p.k.data);
      if (p.fp8)
        stage.copy(4 * (r % 2) + 2 + j, v_src + pass * kRowsInFlight * p.v.ss, valid, p.v.data);
    }
    device::cp_async_commit();
  };
  float sum[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  float amax[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  issue(0);
  for (int r = 0; r < rounds; ++r) {
    if (r + 1 < rounds) {
      issue(r + 1);
      device::cp_async_wait_own<1>();
    } else {
      device::cp_async_wait_own<0>();
    }
    // Rows past the end were zero-filled: they add nothing to either statistic.
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      if (p.smooth_k) {
        const uint4 raw = stage.at(4 * (r % 2) + j);
#pragma unroll
        for (int i = 0; i < 8; ++i)
          sum[i] += element<T>(raw, i);
      }
      if (p.fp8) {
        const uint4 raw = stage.at(4 * (r % 2) + 2 + j);
#pragma unroll
        for (int i = 0; i < 8; ++i)
          amax[i] = fmaxf(amax[i], fabsf(element<T>(raw, i)));
      }
    }
  }
  float* sums = scratch;                        // [kRowsInFlight][D]
  float* maxima = scratch + kRowsInFlight * D;  // [kRowsInFlight][D]
  auto store8 = [&](float* dst, const float(&x)[8]) {
    reinterpret_cast<float4*>(dst)[0] = make_float4(x[0], x[1], x[2], x[3]);
    reinterpret_cast<float4*>(dst)[1] = make_float4(x[4], x[5], x[6], x[7]);
  };
  if (channel_lane<D>(col)) {
    store8(sums + sub * D + col, sum);
    store8(maxima + sub * D + col, amax);
  }
  __syncthreads();
  const std::int64_t at = unit_offset(b, p.heads_kv, hk) * D;
  for (int c = threadIdx.x; c < 2 * D; c += kThreads<D>) {
    const bool is_sum = c < D;
    const int ch = c % D;
    if (is_sum ? !p.smooth_k : !p.fp8) continue;
    const float* part = is_sum ? sums : maxima;
    float total = part[ch];
    for (int r = 1; r < kRowsInFlight; ++r)
      total = is_sum ? total + part[r * D + ch] : fmaxf(total, part[r * D + ch]);
    if (is_sum) {
      atomicAdd(p.w.k_sum + at + ch, total);
    } else {
      // Non-negative floats order like their bit patterns as signed integers.
      atomicMax(reinterpret_cast<int*>(p.w.v_amax + at + ch), __float_as_int(total));
    }
  }
}

// After a statistics job: the CTA's barrier orders every thread's atomics before thread 0's
// release, which makes them visible with the count (release is cumulative: the pattern of the
// cooperative groups' grid barrier). A fence in every thread instead cost each warp a wait
// for its own outstanding stores (kernels/NOTES.md, quant-fused-pipelined).
__device__ void publish_statistics(const JobPlan& p, int unit, bool is_v) {
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device> done(
        *statistics_counter(p, unit, is_v));
    done.fetch_add(1u, cuda::memory_order_release);
  }
}

// Where a K job finds its unit's column sums (D floats) once wait_for_statistics has staged
// them: the end of the scratch, which K's group maxima (at its start) do not reach.
template <int D>
__device__ __forceinline__ float* staged_statistics(float* scratch) {
  return scratch + kScratchWords<D> - D;
}

// Before a job of unit (b, hk) that reads the statistics: one thread waits for the unit's count
// (acquire); for a K job with smoothing its warp then copies the unit's column sums from L2 into
// the scratch (staged_statistics), and the barrier passes both on to the CTA. Returns the staged
// sums, or nullptr where the job needs none (V jobs read their maxima themselves). (Every thread
// loading its own 8 sums from L2 instead made a hot spot: 2048 loads of the same 512 bytes per
// CTA, from all of a unit's CTAs at once, a quarter of the fused queue's stall samples;
// kernels/NOTES.md, quant-mean-in-smem.)
template <int D>
__device__ const float* wait_for_statistics(const JobPlan& p, int b, int hk, bool is_v,
                                            float* scratch) {
  const std::int64_t unit = unit_offset(b, p.heads_kv, hk);
  const float* src = !is_v && p.smooth_k ? p.w.k_sum + unit * D : nullptr;
  float* staged = staged_statistics<D>(scratch);
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device> done(
          *statistics_counter(p, unit, is_v));
      while (done.load(cuda::memory_order_acquire) < static_cast<std::uint32_t>(p.stat_publishes))
        __nanosleep(32);
    }
    __syncwarp();  // orders the warp's loads below after thread 0's acquire
    if (src && threadIdx.x < D / 4) {
      reinterpret_cast<float4*>(staged)[threadIdx.x] =
          __ldcg(reinterpret_cast<const float4*>(src) + threadIdx.x);
    }
    if constexpr (D / 4 > 32) {  // d=192 and 256: the warp's second pass
      if (src && threadIdx.x + 32 < D / 4) {
        reinterpret_cast<float4*>(staged)[threadIdx.x + 32] =
            __ldcg(reinterpret_cast<const float4*>(src) + threadIdx.x + 32);
      }
    }
  }
  __syncthreads();
  return src ? staged : nullptr;
}

}  // namespace
}  // namespace sageattn::detail
