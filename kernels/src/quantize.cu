// Quantization: one launch (after zeroing the statistics). All of it is memory-bound, so the
// design is about bytes, and bytes in flight. K's smoothing needs its mean over the whole
// sequence and V's FP8 scale its per-channel max |v|, both before a single value can be
// quantized; K and V are far larger than L2, so a statistics pass followed by a quantizing pass
// reads them twice from DRAM. Two queues (Q is quantized by the attention kernels as they read
// it, quantize_q.cuh):
//
// - The fused queue (fused_quantize_kernel), wherever it can run: each slice of K or V is read
//   once into shared memory and held there while its unit's statistics complete; persistent
//   CTAs in a cooperative launch, each working on three slices at once (one quantized, one
//   whose statistics are added, one in flight). K and V come from DRAM once.
// - The plain queue (quantize_kernel) otherwise (units longer than the resident CTAs can hold,
//   a refused cooperative launch, FP8 V on GPUs with more DRAM bandwidth: plan_jobs): each
//   (batch, KV head) "unit" has statistics jobs and quantizing jobs, and a unit's statistics
//   jobs are queued a fixed distance ahead of its quantizing jobs (quantize_queue.h): far
//   enough that the statistics are done when they start (twice as many jobs as the GPU runs at
//   once). Job numbers come from an atomic ticket, not from blockIdx. A job that needs
//   statistics waits (spins) until its unit's statistics jobs have all finished; those have
//   lower tickets, so they were taken by CTAs that are already running, and a statistics job
//   never waits. Waiting therefore cannot deadlock, whatever order the hardware starts CTAs in
//   and however few fit on the GPU. (A CTA also holds the ticket after its current one, see
//   below: a chain of waits still runs to strictly lower tickets, so it ends.) The CTAs are
//   persistent, as many as fit on the GPU at once, each taking tickets until the queue is
//   empty; each takes its next ticket while it works on the current job, so the atomic's round
//   trip is hidden.
//
// Both bring rows with cp.async into a per-thread slice of shared memory (8 loads of 16 bytes
// in flight per thread, 16 or 32 KB per CTA and stage), not registers: registers would hold 4
// CTAs per SM to 2.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <tuple>
#include <utility>

#include "device_primitives.cuh"
#include "quantize.h"
#include "quantize_queue.h"

namespace sageattn::detail {
namespace {

// Threads per CTA, per head dim: 4 warps at d=64, 8 at d=128. The fused queue then runs 4 CTAs
// per SM at d=64 (2 at d=128), which measured faster for d=64 at every length; at d=128 the
// smaller CTAs were as fast up to 4k tokens per head and slower beyond (kernels/NOTES.md, q10).
#ifndef SAGEATTN_QUANT_THREADS_D64
#define SAGEATTN_QUANT_THREADS_D64 128
#endif
#ifndef SAGEATTN_QUANT_THREADS_D128
#define SAGEATTN_QUANT_THREADS_D128 256
#endif
template <int D>
constexpr int kThreads = D == 64 ? SAGEATTN_QUANT_THREADS_D64 : SAGEATTN_QUANT_THREADS_D128;
static_assert((kThreads<64> == 128 || kThreads<64> == 256) &&
                  (kThreads<128> == 128 || kThreads<128> == 256),
              "jobs of 4 or 8 warps");
constexpr int kLoadsPerThread = 8;  // 16-byte loads each thread has in flight in a job
constexpr int kScaleRows = 16;      // the finest scale granularity (per_warp)
template <int D>
constexpr int kScratchWords = 16 * kThreads<D>;  // 64 bytes per thread beside the stage
// CTAs per SM the plain queue's registers must allow: 64 registers per thread (4 CTAs of 256
// threads); then a few dozen bytes spill to L1, measured faster than 2 CTAs per SM without
// spills (kernels/NOTES.md, q3).
#ifndef SAGEATTN_QUANT_MIN_BLOCKS_256
#define SAGEATTN_QUANT_MIN_BLOCKS_256 4
#endif
template <int D>
constexpr int kMinBlocks = SAGEATTN_QUANT_MIN_BLOCKS_256 * 256 / kThreads<D>;
template <int D>
constexpr int kStageBytes = kLoadsPerThread* kThreads<D> * 16;
template <int D>
constexpr int kSmemBytes = kStageBytes<D> + kScratchWords<D> * 4;

// Rows of D channels: D/8 threads per row (16 bytes each), so a job of kThreads<D>/32 warps x 8
// loads covers kJobRows<D> rows: 128 at D=128 (8 warps), 128 at D=64 (4 warps).
template <int D>
constexpr int kThreadsPerRow = D / 8;
template <int D>
constexpr int kRowsPerLoad = 32 / kThreadsPerRow<D>;  // rows one warp-wide load covers
template <int D>
constexpr int kWarpRows = kLoadsPerThread* kRowsPerLoad<D>;
template <int D>
constexpr int kJobRows = kThreads<D> / 32 * kWarpRows<D>;
template <int D>
constexpr int kStatJobRows = 2 * kJobRows<D>;  // rows of K and V per statistics job

struct InputView {
  const void* data;
  std::int64_t sb, sh, ss;
};

template <typename T>
__device__ __forceinline__ const T* row_ptr(const InputView& in, int b, int h, int s) {
  return static_cast<const T*>(in.data) + b * in.sb + h * in.sh +
         static_cast<std::int64_t>(s) * in.ss;
}

// Element i of 8 loaded 16-bit values, as float.
template <typename T>
__device__ __forceinline__ float element(const uint4& raw, int i) {
  return static_cast<float>(reinterpret_cast<const T*>(&raw)[i]);
}

// Where a thread's loads land: slot l of thread t is stage[l * kThreads<D> + t] (16 bytes), so a
// warp's copies and reads are consecutive. Only the thread that issued a copy reads it.
template <int D>
struct Stage {
  uint4* base;
  __device__ uint4& at(int l) const { return base[l * kThreads<D> + threadIdx.x]; }
  __device__ void copy(int l, const void* src, bool valid, const void* any_valid) const {
    device::cp_async_16(&at(l), valid ? src : any_valid, valid);
  }
};

// The queue's shape, computed on the host (plan_jobs) and read by every CTA.
struct JobPlan {
  InputView k, v;
  Workspace w;
  int heads_kv, kv_len;
  int units;       // batch x KV heads
  int stat_jobs;   // per unit: 0 when neither K's mean nor V's maxima are needed
  int kv_jobs;     // per unit, for K, and as many again for V on the FP8 paths
  int quant_jobs;  // per unit: K's and V's (the fused queue: its slices)
  QueueShape queue;
  int total_jobs;
  int stat_publishes;  // per counter: the statistics are complete when this many jobs published
  bool fused;          // the fused queue (fused_quantize_kernel), else the plain one
  bool smooth_k, fp8;
  float inv_kv_len;
};

__device__ __forceinline__ std::int64_t unit_offset(int b, int heads, int h) {
  return static_cast<std::int64_t>(b) * heads + h;
}

// Counters of published statistics per unit: 2 in the fused queue on the FP8 paths (a barrier
// group each for K's slices and V's), else 1 (the plain queue's statistics jobs compute both).
__device__ __forceinline__ int barrier_groups(const JobPlan& p) {
  return p.fused && p.fp8 ? 2 : 1;
}

// Whether a fused slice waits at a barrier: V's always (its maxima), K's only when smoothed.
__device__ __forceinline__ bool slice_has_barrier(const JobPlan& p, bool is_v) {
  return is_v || p.smooth_k;
}

// The counter of published statistics that a job of (unit, K or V) waits on (workspace.h). The
// plain queue's statistics jobs compute K's and V's together: one counter per unit. The fused
// queue's K and V slices add to their own statistic only, so each waits for its own: a K slice
// need not wait for the unit's V (q11).
__device__ __forceinline__ std::uint32_t* statistics_counter(const JobPlan& p, std::int64_t unit,
                                                             bool is_v) {
  const int groups = barrier_groups(p);
  return p.w.job_counters + 1 + unit * groups + (is_v ? groups - 1 : 0);
}

// --- statistics -----------------------------------------------------------------------------

// K's column sums and V's column max |v| over kStatJobRows rows, then one atomic per channel.
// D/8 threads read a row, kThreads/(D/8) rows in flight per pass; rounds of 2 passes over K and
// 2 over V go through half of the stage each, the next round's copies in flight while a round
// is summed. The threads' partial results meet in shared memory.
template <typename T, int D>
__device__ void statistics_job(const JobPlan& p, int b, int hk, int job, const Stage<D>& stage,
                               float* scratch) {
  constexpr int kRowsInFlight = kThreads<D> / kThreadsPerRow<D>;
  constexpr int kRoundRows = 2 * kRowsInFlight;
  constexpr int kRounds = kStatJobRows<D> / kRoundRows;
  static_assert(2 * kRowsInFlight * D <= kScratchWords<D> && kLoadsPerThread == 8);
  const int col = (threadIdx.x % kThreadsPerRow<D>)*8, sub = threadIdx.x / kThreadsPerRow<D>;
  const int begin = job * kStatJobRows<D>, end = min(p.kv_len, begin + kStatJobRows<D>);
  const int rounds = (end - begin + kRoundRows - 1) / kRoundRows;
  const T* k_src = row_ptr<T>(p.k, b, hk, begin + sub) + col;
  const T* v_src = row_ptr<T>(p.v, b, hk, begin + sub) + col;
  // Round r uses slots 4(r%2) .. 4(r%2)+3: two rows of K, then two of V.
  auto issue = [&](int r) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int pass = 2 * r + j;
      const bool valid = begin + pass * kRowsInFlight + sub < end;
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
  store8(sums + sub * D + col, sum);
  store8(maxima + sub * D + col, amax);
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
// for its own outstanding stores (ncu: 7-13% of the fused queue's stall samples, q9).
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
// kernels/NOTES.md, q10.)
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
  }
  __syncthreads();
  return src ? staged : nullptr;
}

// --- K to INT8 ------------------------------------------------------------------------------
// (Q is quantized by the attention kernels themselves, as they read it: quantize_q.cuh.)

struct RowsTarget {
  InputView in;
  int h, heads, len, len_pad, rows_per_scale;
  std::int8_t* out;
  float* scales;
  // K's column sums of this unit, staged in shared memory by wait_for_statistics (quantize
  // x - mean(K)), or nullptr
  const float* k_sum;
};

// kJobRows<D> rows to INT8, scale = max|x| / 127 per 16 rows (per_warp) or 64 (per_block),
// values rounded to nearest; rows past `len` (up to the padded length) are written as zeros.
// Each warp owns kWarpRows consecutive rows; the maxima of 16-row groups meet in shared memory.
// The rows stay in registers as loaded (16-bit) between the max and the rounding: half the
// registers of floats, which lets more CTAs share an SM.
// The thread's place in a rows job: kLoadsPerThread rows, kRowsPerLoad<D> apart, from row0, at
// channels col .. col+7.
template <int D>
struct RowsThread {
  int warp, lane, col, warp_row0, row0;
  bool active;  // the warp has rows (len_pad is a multiple of 64)
  __device__ RowsThread(int job, int len_pad)
      : warp(threadIdx.x / 32),
        lane(threadIdx.x % 32),
        col((lane % kThreadsPerRow<D>)*8),
        warp_row0(job * kJobRows<D> + warp * kWarpRows<D>),
        row0(warp_row0 + lane / kThreadsPerRow<D>),
        active(warp_row0 < len_pad) {}
};

// A rows job's copies into the stage (not committed: the caller closes the group).
template <typename T, int D>
__device__ void issue_rows(const RowsTarget& t, int b, int job, const Stage<D>& stage) {
  const RowsThread<D> th(job, t.len_pad);
  const T* src = row_ptr<T>(t.in, b, t.h, th.row0) + th.col;
  const std::int64_t step = t.in.ss * kRowsPerLoad<D>;
#pragma unroll
  for (int l = 0; l < kLoadsPerThread; ++l, src += step)
    stage.copy(l, src, th.active && th.row0 + l * kRowsPerLoad<D> < t.len, t.in.data);
}

// The rest of a rows job, once this thread's copies have landed.
template <typename T, int D>
__device__ void quantize_rows(const RowsTarget& t, const JobPlan& p, int b, int job,
                              const Stage<D>& stage, float* scratch) {
  constexpr int kLoadsPerGroup = kScaleRows / kRowsPerLoad<D>;
  constexpr int kGroupsPerWarp = kWarpRows<D> / kScaleRows;
  const RowsThread<D> th(job, t.len_pad);
  const int warp = th.warp, lane = th.lane, col = th.col, warp_row0 = th.warp_row0;
  const int row0 = th.row0;
  const bool active = th.active;
  float mean[8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    mean[i] = t.k_sum ? t.k_sum[col + i] * p.inv_kv_len : 0.f;
  // Padding rows stay zero: the mean is subtracted from real rows only.
  auto value = [&](const uint4& raw, int l, int i) {
    const float x = element<T>(raw, i);
    return t.k_sum && row0 + l * kRowsPerLoad<D> < t.len ? x - mean[i] : x;
  };
  float* group_max = scratch;  // [warps x kGroupsPerWarp]
#pragma unroll
  for (int g = 0; g < kGroupsPerWarp; ++g) {
    float amax = 0.f;
#pragma unroll
    for (int l = g * kLoadsPerGroup; l < (g + 1) * kLoadsPerGroup; ++l) {
      const uint4 raw = stage.at(l);
#pragma unroll
      for (int i = 0; i < 8; ++i)
        amax = fmaxf(amax, fabsf(value(raw, l, i)));
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    if (lane == 0) group_max[warp * kGroupsPerWarp + g] = amax;
  }
  __syncthreads();
  if (!active) return;
  const int groups_per_scale = t.rows_per_scale / kScaleRows;
  std::int8_t* dst = t.out + (unit_offset(b, t.heads, t.h) * t.len_pad + row0) * D + col;
#pragma unroll
  for (int g = 0; g < kGroupsPerWarp; ++g) {
    const int group = warp * kGroupsPerWarp + g;
    const int first = group / groups_per_scale * groups_per_scale;
    float amax = group_max[first];
    for (int j = 1; j < groups_per_scale; ++j)
      amax = fmaxf(amax, group_max[first + j]);
    const float inv = device::int8_inverse_scale(amax);
    const int group_row0 = warp_row0 + g * kScaleRows;
    if (lane == 0 && group_row0 % t.rows_per_scale == 0) {
      t.scales[unit_offset(b, t.heads, t.h) * (t.len_pad / t.rows_per_scale) +
               group_row0 / t.rows_per_scale] = device::int8_scale(amax, 1.f);
    }
#pragma unroll
    for (int l = g * kLoadsPerGroup; l < (g + 1) * kLoadsPerGroup; ++l) {
      const uint4 raw = stage.at(l);
      float x[8];
#pragma unroll
      for (int i = 0; i < 8; ++i)
        x[i] = value(raw, l, i);
      *reinterpret_cast<uint2*>(dst + l * kRowsPerLoad<D> * D) = device::quantize_int8x8(x, inv);
    }
  }
}

// --- V to FP8 ---------------------------------------------------------------------------------

// The 4 keys whose e4m3 values sit at positions 4·quad .. 4·quad+3 of a tile. Within each
// group of 32 keys the FP8 P·V mma's k index 4t+i (i < 2) is key 2t+i and 4t+i (i >= 2) is
// key 8+2t+i-2, per half of 16: where the P fragment left by the Q·Kᵀ mma already holds those
// keys (attention.cuh). So a quad of positions is keys {first, first+1, first+8, first+9}.
__device__ __forceinline__ int quad_first_key(int quad) {
  return 32 * (quad / 8) + 16 * (quad % 8 / 4) + 2 * (quad % 4);
}

// Shared tile of the transposed V: D rows (channels) of kJobRows<D> bytes (keys), as 32-bit
// words. 16-byte chunk m of row c lives at chunk m ^ (c/8 % 8), so that both the scattered
// word stores (8 channel groups x 4 quads per warp) and the 16-byte row reads (8 threads per
// 128 bytes) are free of bank conflicts.
template <int D>
__device__ __forceinline__ int tile_word(int c, int word) {
  constexpr int kRowWords = kJobRows<D> / 4;
  constexpr int kSwizzle = kRowWords / 4 < 8 ? kRowWords / 4 : 8;  // 16-byte chunks it permutes
  return c * kRowWords + ((word / 4) ^ (c / 8 % kSwizzle)) * 4 + word % 4;
}

// V to FP8 e4m3 with its per-channel scale 448 / max|v|, transposed to [D][keys] with the keys
// permuted (above) and the padding zeroed: kJobRows<D> keys (fewer for the last job of a head,
// in steps of 64). A thread converts 2 x (4 keys x 8 channels): 8 rows read with 16-byte loads
// (all issued first), 8 words of 4 e4m3 bytes each written to the tile; then the tile's rows go
// out as 16-byte stores.

// The thread's tasks in a V job: (channel group, key quad) pairs, kTasksPerThread of them.
template <int D>
struct VTasks {
  static constexpr int kGroups = D / 8;  // channel groups of 8
  static constexpr int kGroupsHigh = kGroups / 8;
  static constexpr int kTasks = kGroups * kJobRows<D> / 4;
  static constexpr int kPerThread = kTasks / kThreads<D>;
  static_assert(kPerThread * 4 == kLoadsPerThread && D * kJobRows<D> / 4 <= kScratchWords<D>);
  int group[kPerThread], quad[kPerThread];
  __device__ VTasks() {
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      // Lane bits: 8 channel groups x 4 quads per warp (see tile_word).
      const int task = threadIdx.x + j * kThreads<D>, rest = task >> 5;
      group[j] = (rest % kGroupsHigh) * 8 + (task & 7);
      quad[j] = (rest / kGroupsHigh) * 4 + ((task >> 3) & 3);
    }
  }
};

template <int D>
__device__ __forceinline__ int v_job_keys(const JobPlan& p, int job) {
  return min(kJobRows<D>, p.w.kv_pad - job * kJobRows<D>);
}

// A V job's copies into the stage (not committed): task j's 4 keys in slots 4j..4j+3.
template <typename T, int D>
__device__ void issue_v(const JobPlan& p, int b, int hk, int job, const Stage<D>& stage) {
  const VTasks<D> tasks;
  const int key0 = job * kJobRows<D>, keys = v_job_keys<D>(p, job);
#pragma unroll
  for (int j = 0; j < VTasks<D>::kPerThread; ++j) {
    const int first = key0 + quad_first_key(tasks.quad[j]);
    const T* src = row_ptr<T>(p.v, b, hk, first) + tasks.group[j] * 8;
    constexpr int kKeyOffset[4] = {0, 1, 8, 9};
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      stage.copy(4 * j + r, src + kKeyOffset[r] * p.v.ss,
                 tasks.quad[j] * 4 < keys && first + kKeyOffset[r] < p.kv_len, p.v.data);
    }
  }
}

// The rest of a V job, once this thread's copies have landed: 8 words of 4 e4m3 bytes each
// written to the tile, then the tile's rows go out as 16-byte stores.
template <typename T, int D>
__device__ void quantize_v(const JobPlan& p, int b, int hk, int job, const Stage<D>& stage,
                           std::uint32_t* tile) {
  const VTasks<D> tasks;
  const int key0 = job * kJobRows<D>, keys = v_job_keys<D>(p, job);
  const std::int64_t unit = unit_offset(b, p.heads_kv, hk);
  const float* amax = p.w.v_amax + unit * D;
  // The task's 8 channel maxima as two 16-byte L2 loads, all issued before the first use (one
  // at a time, each waited for before its conversions, they were the V jobs' top stall, q9).
  // (Staged through shared memory as K's sums are, they measured 1-5% slower at d=64: the tile
  // then has to wait for every thread's reads, q10.)
  float4 m4[VTasks<D>::kPerThread][2];
#pragma unroll
  for (int j = 0; j < VTasks<D>::kPerThread; ++j) {
    const float4* src = reinterpret_cast<const float4*>(amax + tasks.group[j] * 8);
    m4[j][0] = __ldcg(src);
    m4[j][1] = __ldcg(src + 1);
  }
#pragma unroll
  for (int j = 0; j < VTasks<D>::kPerThread; ++j) {
    if (tasks.quad[j] * 4 >= keys) continue;
    const float m[8] = {m4[j][0].x, m4[j][0].y, m4[j][0].z, m4[j][0].w,
                        m4[j][1].x, m4[j][1].y, m4[j][1].z, m4[j][1].w};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int c = tasks.group[j] * 8 + i;
      const float inv = m[i] > 0.f ? kFp8Max / m[i] : 0.f;
      auto pair = [&](int r) {
        const float2 x = make_float2(element<T>(stage.at(4 * j + r), i) * inv,
                                     element<T>(stage.at(4 * j + r + 1), i) * inv);
        return static_cast<std::uint32_t>(__nv_cvt_float2_to_fp8x2(x, __NV_SATFINITE, __NV_E4M3));
      };
      tile[tile_word<D>(c, tasks.quad[j])] = pair(0) | pair(2) << 16;
    }
  }
  __syncthreads();
  constexpr int kChunks = kJobRows<D> / 16;  // 16-byte chunks per tile row
  std::uint8_t* out = p.w.v + unit * D * p.w.kv_pad + key0;
  for (int i = threadIdx.x; i < D * kChunks; i += kThreads<D>) {
    const int c = i / kChunks, chunk = i % kChunks;
    if (chunk * 16 >= keys) continue;
    *reinterpret_cast<uint4*>(out + static_cast<std::int64_t>(c) * p.w.kv_pad + chunk * 16) =
        *reinterpret_cast<const uint4*>(tile + tile_word<D>(c, chunk * 4));
  }
}

// The next job's ticket (one atomic per job). Relaxed: a ticket only says which job to do; the
// statistics are ordered by their own counters.
__device__ inline int take_ticket(const JobPlan& p) {
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device> tickets(p.w.job_counters[0]);
  return static_cast<int>(tickets.fetch_add(1u, cuda::memory_order_relaxed));
}

// K's rows job target for KV head hk (its smoothing mean set by the caller).
__device__ inline RowsTarget k_target(const JobPlan& p, int hk) {
  RowsTarget k{};
  k.in = p.k;
  k.h = hk;
  k.heads = p.heads_kv;
  k.len = p.kv_len;
  k.len_pad = p.w.kv_pad;
  k.rows_per_scale = p.w.k_rows;
  k.out = p.w.k;
  k.scales = p.w.k_scale;
  return k;
}

// --- the fused queue: K and V read once, held in shared memory until their statistics are done --

// A slice is kJobRows<D> rows of one unit's K, or keys of its V (FP8 paths). The slices of the
// call are numbered unit by unit (per unit: its K slices, then its V slices), and CTA c of a grid
// of G takes slices c, c + G, c + 2G, ...: round i of every CTA is slices iG .. iG + G - 1. A
// slice is loaded once into a ring of kFusedSlots slots and held there until its unit's
// statistics are complete; then it is quantized from shared memory. K and V thus come from DRAM
// once, against twice in the plain queue, whose second read misses L2 (ncu: K read twice at 1k
// tokens per head too; kernels/NOTES.md, q6).
//
// Iteration i of a CTA: (1) issue the copies of round i + 1's slice; (2) once round i's have
// landed, add that slice's part of the statistics and publish it; (3) wait until round i - 1's
// slice has its statistic (K's mean, or V's maxima: a K slice waits for the unit's K slices
// only, a V slice for its V slices), and quantize it. The wait at that barrier therefore comes
// after this CTA's own next slice is published and while the one after is in flight (q6's
// version loaded, published, waited and quantized one slice at a time: every CTA idled at each
// barrier with no loads in flight). K and V in separate slices keep a slot at one stage, so that
// two CTAs share an SM on the FP8 paths too (q9); separate barriers for K and V halve the CTAs
// that meet at each, and let units twice as long take this queue (q11).
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

// A fused slice (quantize_queue.h numbers them, per barrier group of kv_jobs slices): its unit,
// K or V, and which job of kJobRows<D> rows. Per unit: its K slices, then its V slices (FP8
// paths): quant_jobs in all.
struct SliceJob {
  int b, hk, unit, job;
  bool is_v;
  __device__ SliceJob(const JobPlan& p, int round) {
    const FusedJob f = fused_job(p.kv_jobs, barrier_groups(p), static_cast<int>(gridDim.x),
                                 static_cast<int>(blockIdx.x), round);
    unit = f.unit;
    is_v = f.is_v;
    job = f.job;
    b = unit / p.heads_kv;
    hk = unit % p.heads_kv;
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
  if (!s.is_v && p.smooth_k) {
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
    reinterpret_cast<float4*>(dst)[0] = make_float4(sum[0], sum[1], sum[2], sum[3]);
    reinterpret_cast<float4*>(dst)[1] = make_float4(sum[4], sum[5], sum[6], sum[7]);
    __syncthreads();
    if (threadIdx.x < D) {
      float total = 0.f;
      for (int r = 0; r < kSubs; ++r)
        total += sums[r * D + threadIdx.x];
      atomicAdd(p.w.k_sum + at + threadIdx.x, total);
    }
  } else if (s.is_v) {
    // A warp's lanes are 8 channel groups x 4 key quads (VTasks): the maxima over the quads meet
    // through two shuffle rounds, then the quad-0 lanes write one partial per channel and row of
    // `partial`, which threads < D reduce (shared-memory atomics here were 15% of the stall
    // samples, q9).
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
  if (slice_has_barrier(p, s.is_v)) publish_statistics(p, s.unit, s.is_v);
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads<D>, 512 / kThreads<D>)
    fused_quantize_kernel(const __grid_constant__ JobPlan p) {
  extern __shared__ uint4 dynamic_smem[];  // kFusedSlots stages, then the scratch
  constexpr int kStageWords = kLoadsPerThread * kThreads<D>;  // uint4 per stage
  float* scratch = reinterpret_cast<float*>(dynamic_smem + kFusedSlots * kStageWords);
  auto stage = [&](int round) {
    return Stage<D>{dynamic_smem + round % kFusedSlots * kStageWords};
  };
  // Slice r·G + c of the call's total_jobs (quantize_queue.h: fused_slice).
  auto exists = [&](int round) {
    return round * static_cast<int>(gridDim.x) + static_cast<int>(blockIdx.x) < p.total_jobs;
  };
  auto issue = [&](const SliceJob& s, int round) {
    if (s.is_v) {
      issue_v<T, D>(p, s.b, s.hk, s.job, stage(round));
    } else {
      issue_rows<T, D>(k_target(p, s.hk), s.b, s.job, stage(round));
    }
    device::cp_async_commit();
  };
  // Each slice is decoded once, when its copies are issued, and passed on from round to round.
  SliceJob current(p, 0), previous = current;
  if (exists(0)) issue(current, 0);
  for (int round = 0;; ++round) {
    const bool has_this = exists(round);
    const bool has_previous = (round > 0);
    if (!has_this && !has_previous) break;
    const SliceJob next(p, round + 1);
    if (has_this) {
      if (exists(round + 1)) {
        issue(next, round + 1);
        device::cp_async_wait_own<1>();
      } else {
        device::cp_async_wait_own<0>();
      }
      slice_statistics<T, D>(p, current, stage(round), scratch);
    }
    if (has_previous) {
      // K slices without smoothing need no statistic: no barrier (and none was published).
      const float* k_sum =
          slice_has_barrier(p, previous.is_v)
              ? wait_for_statistics<D>(p, previous.b, previous.hk, previous.is_v, scratch)
              : nullptr;
      if (previous.is_v) {
        quantize_v<T, D>(p, previous.b, previous.hk, previous.job, stage(round - 1),
                         reinterpret_cast<std::uint32_t*>(scratch));
      } else {
        RowsTarget k = k_target(p, previous.hk);
        k.k_sum = k_sum;
        quantize_rows<T, D>(k, p, previous.b, previous.job, stage(round - 1), scratch);
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

// --- the plain queue --------------------------------------------------------------------------

template <typename T, int D>
__device__ void run_job(const JobPlan& p, const JobRef& ref, const Stage<D>& stage,
                        std::uint32_t* scratch) {
  const int unit = ref.unit;
  const int b = unit / p.heads_kv, hk = unit % p.heads_kv;
  float* scratch_f = reinterpret_cast<float*>(scratch);
  int job = ref.job;
  if (job < p.stat_jobs) {
    statistics_job<T, D>(p, b, hk, job, stage, scratch_f);
    publish_statistics(p, unit, /*is_v=*/false);  // the plain queue: one counter per unit
    return;
  }
  job -= p.stat_jobs;  // per unit: its statistics, then its K and V jobs
  const bool is_v = job >= p.kv_jobs;
  RowsTarget k = k_target(p, hk);
  // The copies first: they need no statistics, so their latency overlaps the wait.
  if (is_v) {
    issue_v<T, D>(p, b, hk, job - p.kv_jobs, stage);
  } else {
    issue_rows<T, D>(k, b, job, stage);
  }
  device::cp_async_commit();
  if (p.stat_jobs > 0) k.k_sum = wait_for_statistics<D>(p, b, hk, is_v, scratch_f);
  device::cp_async_wait_own<0>();
  if (is_v) {
    quantize_v<T, D>(p, b, hk, job - p.kv_jobs, stage, scratch);
  } else {
    quantize_rows<T, D>(k, p, b, job, stage, scratch_f);
  }
}

// The plain queue: its shared memory allows kMinBlocks CTAs per SM (4 of 256 threads, 8 of 128)
// and it gets their registers (kernels/NOTES.md, q3).
template <typename T, int D>
__global__ void __launch_bounds__(kThreads<D>, kMinBlocks<D>)
    quantize_kernel(const __grid_constant__ JobPlan p) {
  __shared__ int next_ticket;
  extern __shared__ uint4 dynamic_smem[];  // the stage, then the scratch: kSmemBytes
  const Stage<D> stage{dynamic_smem};
  std::uint32_t* scratch =
      reinterpret_cast<std::uint32_t*>(dynamic_smem + kLoadsPerThread * kThreads<D>);
  if (threadIdx.x == 0) next_ticket = take_ticket(p);
  __syncthreads();
  for (int ticket = next_ticket; ticket < p.total_jobs;) {
    // The next ticket is taken now and stored only after the job: the atomic's round trip
    // overlaps the job's loads.
    const JobRef ref = decode_ticket(p.queue, ticket);
    int prefetched = 0;
    if (threadIdx.x == 0) prefetched = take_ticket(p);
    run_job<T, D>(p, ref, stage, scratch);
    __syncthreads();  // the job is done with `scratch` and `next_ticket`
    if (threadIdx.x == 0) next_ticket = prefetched;
    __syncthreads();
    ticket = next_ticket;
  }
}

// How many CTAs of the kernel the current GPU runs at once, with the plain queue's shared
// memory and with the fused queue's, whether it can launch cooperatively, and its peak DRAM
// bandwidth (cached per device; callers on several host threads may fill the cache at once,
// with the same value).
struct Residency {
  int plain = 0, fused = 0;
  int dram_gbps = 0;  // GB/s, from the memory clock and bus width (0: unknown)
  bool cooperative = false;
};

template <typename T, int D>
cudaError_t residency(Residency* r) {
  // Packed as valid(1) | cooperative(1) | dram_gbps(16) | fused(16) | plain(16) bits.
  static std::atomic<std::uint64_t> cached[64] = {};
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device)) return e;
  if (const std::uint64_t known =
          device < 64 ? cached[device].load(std::memory_order_relaxed) : 0) {
    r->plain = static_cast<int>(known & 0xffff);
    r->fused = static_cast<int>(known >> 16 & 0xffff);
    r->dram_gbps = static_cast<int>(known >> 32 & 0xffff);
    r->cooperative = known >> 48 & 1;
    return cudaSuccess;
  }
  int sms = 0, cooperative = 0, plain = 0, fused = 0, memory_khz = 0, bus_bits = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device))
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device))
    return e;
  // Not every platform reports these (0 then, and the bandwidth counts as unknown).
  if (cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    (void)cudaGetLastError();
    memory_khz = bus_bits = 0;
  }
  // More than the 48 KB of shared memory a kernel gets without asking.
  for (const auto& [kernel, bytes, count] :
       {std::tuple{quantize_kernel<T, D>, kSmemBytes<D>, &plain},
        std::tuple{fused_quantize_kernel<T, D>, kFusedSmemBytes<D>, &fused}}) {
    if (cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)) {
      return e;
    }
    if (cudaError_t e =
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(count, kernel, kThreads<D>, bytes)) {
      return e;
    }
  }
  r->plain = std::min(std::max(1, sms * plain), 0xffff);
  r->fused = std::min(sms * fused, 0xffff);
  // Double data rate: two transfers per memory clock.
  const long long gbps = 2LL * memory_khz * (bus_bits / 8) / 1000000;
  r->dram_gbps = static_cast<int>(std::min(gbps, 0xffffLL));
  r->cooperative = cooperative != 0;
  if (device < 64) {
    cached[device].store(std::uint64_t{1} << 49 | std::uint64_t{r->cooperative} << 48 |
                             static_cast<std::uint64_t>(r->dram_gbps) << 32 |
                             static_cast<std::uint64_t>(r->fused) << 16 |
                             static_cast<std::uint64_t>(r->plain),
                         std::memory_order_relaxed);
  }
  return cudaSuccess;
}

// SAGEATTN_QUANT_FUSED, for measurements, read once: "0" never takes the fused queue, "1" takes
// it wherever it can run (ignoring the bandwidth rule below); unset: the rules decide.
enum class FusedMode { rules, never, wherever_possible };
FusedMode fused_mode() {
  static const FusedMode mode = [] {
    const char* env = std::getenv("SAGEATTN_QUANT_FUSED");
    if (env && env[0] == '0') return FusedMode::never;
    if (env && env[0] == '1') return FusedMode::wherever_possible;
    return FusedMode::rules;
  }();
  return mode;
}

// Above this peak DRAM bandwidth the fused queue takes K alone (no FP8 V): see plan_jobs.
constexpr int kFusedMaxDramGBps = 4000;

// The distance between a unit's statistics and its quantizing jobs, in jobs, as a multiple of
// the CTAs the GPU runs at once: SAGEATTN_QUANT_GAP (tenths; default 20 = twice). A tuning
// knob for measurements, read once.
int gap_tenths() {
  static const int tenths = [] {
    const char* env = std::getenv("SAGEATTN_QUANT_GAP");
    const int v = env ? std::atoi(env) : 0;
    return v > 0 ? v : 20;
  }();
  return tenths;
}

template <int D>
JobPlan plan_jobs(const Params& p, const Workspace& w, const Residency& r) {
  JobPlan plan{};
  plan.k = {p.k.data, p.k.stride_batch, p.k.stride_head, p.k.stride_seq};
  plan.v = {p.v.data, p.v.stride_batch, p.v.stride_head, p.v.stride_seq};
  plan.w = w;
  plan.heads_kv = p.heads_kv;
  plan.kv_len = p.kv_len;
  plan.units = p.batch * p.heads_kv;
  plan.smooth_k = p.smooth_k;
  plan.fp8 = uses_fp8_v(p.pv_path);
  plan.kv_jobs = (w.kv_pad + kJobRows<D> - 1) / kJobRows<D>;
  const bool needs_statistics = plan.smooth_k || plan.fp8;
  // The fused queue needs each barrier group's slices (a unit's K, or its V) in at most two
  // consecutive rounds of its grid (fused_quantize_kernel): no more slices per group than CTAs
  // resident at once. Where it can run it was faster than the plain queue at every length, head
  // dim and path measured on an H100 (3.35 TB/s). On an H200 (4.9 TB/s) it was faster for K
  // alone (the 16-bit P·V paths), but not with V (FP8 paths): 2-3% slower at d=128 1-2k, 7-22%
  // at d=64; with K and V counted apart (q11) it won some lengths there and lost others (d=128
  // 1k 0.36 vs 0.39 ms, 16k 0.42 vs 0.39), so the plain queue keeps V above 4 TB/s, where its
  // second read of V costs about what the fused queue's waits do (kernels/NOTES.md q7, q9, q11).
  const FusedMode mode = fused_mode();
  const bool fused_pays = mode == FusedMode::wherever_possible ||
                          (r.dram_gbps > 0 && (r.dram_gbps < kFusedMaxDramGBps || !plan.fp8));
  // K's jobs and V's: the plain queue's quantizing jobs, the fused queue's slices.
  // In the fused queue each kind (K, and V on the FP8 paths) of a unit is a barrier group.
  const int kinds = plan.fp8 ? 2 : 1;
  plan.quant_jobs = plan.kv_jobs * kinds;
  const int groups = static_cast<int>(
      std::min<long long>(static_cast<long long>(plan.units) * kinds, 0x7fffffffLL));
  plan.fused = needs_statistics && mode != FusedMode::never && r.cooperative &&
               fused_queue_can_run(groups, plan.kv_jobs, r.fused) && fused_pays;
  if (plan.fused) {  // no tickets, so no queue shape: fused_quantize_kernel deals the slices
    plan.stat_jobs = 0;
    plan.stat_publishes = plan.kv_jobs;  // per barrier group
  } else {
    plan.stat_jobs = needs_statistics ? (p.kv_len + kStatJobRows<D> - 1) / kStatJobRows<D> : 0;
    plan.stat_publishes = plan.stat_jobs;
    const long long gap = static_cast<long long>(r.plain) * gap_tenths() / 10;
    plan.queue = make_queue_shape(plan.units, plan.stat_jobs, plan.quant_jobs,
                                  static_cast<int>(std::min<long long>(gap, 1 << 30)));
  }
  plan.inv_kv_len = 1.f / static_cast<float>(p.kv_len);
  return plan;
}

template <typename T, int D>
cudaError_t launch(const Params& p, const Workspace& w, cudaStream_t stream) {
  Residency r;
  if (cudaError_t e = residency<T, D>(&r)) return e;
  JobPlan plan = plan_jobs<D>(p, w, r);
  auto count_jobs = [&] {
    const long long jobs = static_cast<long long>(plan.units) * (plan.stat_jobs + plan.quant_jobs);
    plan.total_jobs = static_cast<int>(std::min<long long>(jobs, 0x7fffffffLL));
    return jobs;
  };
  if (count_jobs() > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  if (plan.fused) {
    // Cooperative: every CTA of the grid resident at once, which the slices' barrier needs.
    const unsigned ctas = static_cast<unsigned>(std::min(plan.total_jobs, r.fused));
    void* args[] = {&plan};
    const cudaError_t e = cudaLaunchCooperativeKernel(
        reinterpret_cast<const void*>(fused_quantize_kernel<T, D>), dim3(ctas), dim3(kThreads<D>),
        args, kFusedSmemBytes<D>, stream);
    if (e == cudaSuccess) return e;
    // Refused (as under some sharing setups): the plain queue needs no co-residency.
    (void)cudaGetLastError();
    r.cooperative = false;
    plan = plan_jobs<D>(p, w, r);
    if (count_jobs() > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  }
  const unsigned ctas = static_cast<unsigned>(std::min(plan.total_jobs, r.plain));
  quantize_kernel<T, D><<<ctas, kThreads<D>, kSmemBytes<D>, stream>>>(plan);
  return cudaGetLastError();
}

}  // namespace

cudaError_t quantize_inputs(const Params& p, const Workspace& w, cudaStream_t stream) {
  // The statistics are accumulated with atomics and the queue's counters start at zero.
  if (cudaError_t e = cudaMemsetAsync(w.k_sum, 0, w.stats_bytes, stream)) return e;
  const bool f16 = p.dtype == DType::f16;
  if (p.head_dim == 64) {
    return f16 ? launch<half, 64>(p, w, stream) : launch<__nv_bfloat16, 64>(p, w, stream);
  }
  return f16 ? launch<half, 128>(p, w, stream) : launch<__nv_bfloat16, 128>(p, w, stream);
}

}  // namespace sageattn::detail
