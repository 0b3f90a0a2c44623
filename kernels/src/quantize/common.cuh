// The quantization kernels' shapes and shared pieces: threads per CTA, the rows a job covers, the
// per-thread shared-memory stage of cp.async loads, the queue's plan (JobPlan, made on the host by
// quantize.cu) and the counters through which a unit's statistics are published.
// Part of quantize.cu's one translation unit (its anonymous namespace): included there only.
#pragma once

#include <cstdint>
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/device_primitives.cuh"
#include "../common/sequence.h"
#include "../common/tile_config.h"
#include "quantize.h"
#include "queue.h"

namespace sageattn::detail {
namespace {

// Threads per CTA, per head dim: the manifest's HEAD_DIM_SHAPES (tile_config.h).
template <int D>
constexpr int kThreads = kHeadDimShape<D>.quant_threads;
constexpr bool jobs_of_4_or_8_warps() {
  for (const HeadDimShape& shape : kHeadDimShapes) {
    if (shape.quant_threads != 128 && shape.quant_threads != 256) return false;
  }
  return true;
}
static_assert(jobs_of_4_or_8_warps(), "jobs of 4 or 8 warps");
constexpr int kLoadsPerThread = 8;  // 16-byte loads each thread has in flight in a job
constexpr int kScaleRows = 16;      // the finest scale granularity (per_warp)
template <int D>
constexpr int kScratchWords = 16 * kThreads<D>;  // 64 bytes per thread beside the stage
// CTAs per SM the plain queue's registers must allow (SAGEATTN_QUANT_MIN_BLOCKS_256 of 256
// threads: 64 registers per thread).
template <int D>
constexpr int kMinBlocks = SAGEATTN_QUANT_MIN_BLOCKS_256 * 256 / kThreads<D>;
template <int D>
constexpr int kStageBytes = kLoadsPerThread* kThreads<D> * 16;
template <int D>
constexpr int kSmemBytes = kStageBytes<D> + kScratchWords<D> * 4;

// Rows of D channels: D/8 threads per row (16 bytes each), so a job of kThreads<D>/32 warps x 8
// loads covers kJobRows<D> rows: 128 at D=128 (8 warps), 128 at D=64 (4 warps), 64 at D=192 and
// D=256, 128 at D=96. A row of D=192 (24 chunks) takes a whole warp, whose last 8 lanes are
// idle, and one of D=96 (12 chunks) half a warp with 4 idle: they copy nothing (zero-filled), add
// zeros and store nothing (kIdleLanes, channel_lane).
template <int D>
constexpr int kThreadsPerRow = device::row_lanes(D);
template <int D>
constexpr bool kIdleLanes = kThreadsPerRow<D> * 8 != D;
// Whether a thread whose row chunk starts at channel `col` holds channels of the row.
template <int D>
__device__ __forceinline__ bool channel_lane(int col) {
  return !kIdleLanes<D> || col < D;
}
// V is quantized (FP8 P·V) only at the head dims the FP8 paths take (sageattn.h:
// path_supports_head_dim): no V jobs are built for the others.
template <int D>
constexpr bool kQuantizesV = path_supports_head_dim(PvPath::fp8, D);
template <int D>
constexpr int kRowsPerLoad = 32 / kThreadsPerRow<D>;  // rows one warp-wide load covers
template <int D>
constexpr int kWarpRows = kLoadsPerThread* kRowsPerLoad<D>;
template <int D>
constexpr int kJobRows = kThreads<D> / 32 * kWarpRows<D>;
template <int D>
constexpr int kStatJobRows = 2 * kJobRows<D>;  // rows of K and V per statistics job

// The caller's K or V: its batch, head and row strides (elements; a varlen call's batch stride is
// 0, its sequences' rows come from cu_seqlens_k).
struct InputView {
  const void* data;
  std::int64_t sb, sh, ss;
};

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
  int heads_kv;
  int kv_len;  // the call's (varlen: the longest sequence's)
  // Varlen calls: the sequences' offsets and the rows of K and V (else null and 0).
  const std::int32_t* cu_k;
  int total_k;
  int units;       // batch x KV heads
  int stat_jobs;   // per unit: 0 when neither K's mean nor V's maxima are needed
  int kv_jobs;     // per unit, for K, and as many again for V on the FP8 paths
  int quant_jobs;  // per unit: K's and V's (the fused queue: its slices)
  QueueShape queue;
  int total_jobs;
  int stat_publishes;  // per counter: the statistics are complete when this many jobs published
  bool fused;          // the fused queue (fused_quantize_kernel), else the plain one
  bool smooth_k, fp8;
  float v_fp8_max;   // fp8: what V's per-channel scale maps max|v| to (fp8_v_max)
  float inv_kv_len;  // 1 / kv_len (dense calls)
};

__device__ __forceinline__ std::int64_t unit_offset(int b, int heads, int h) {
  return static_cast<std::int64_t>(b) * heads + h;
}

// The sequence of unit (b, hk), a KV head of batch or sequence b, as the quantization sees it
// (sequence.h): its rows of the caller's K and V, how many, the rows of its workspace region it
// writes (its keys, then zeros: dense kv_pad, varlen whole 128-row tiles), and where that region
// starts. kVarlen is a template parameter of the kernels, as in the attention kernels
// (attention_sequence.cuh): their dense instantiations see the call's numbers.
template <bool kVarlen>
struct UnitSequence {
  int len, len_pad;
  std::int64_t k_offset, v_offset;  // elements to its first row of the caller's K and V
  std::int64_t unit;                // its workspace unit (workspace.h) ...
  int row;                          // ... and its first row there
  std::int64_t ws_row0;             // unit · unit_rows + row: among all the workspace's K rows
  __device__ __forceinline__ UnitSequence(const JobPlan& p, int b, int hk) {
    const SeqSpan span = sequence_span<kVarlen>(p.cu_k, b, p.total_k, p.kv_len);
    len = span.len;
    len_pad = kVarlen ? varlen_region_rows(len) : p.w.kv_pad;
    k_offset = b * p.k.sb + hk * p.k.sh + static_cast<std::int64_t>(span.start) * p.k.ss;
    v_offset = b * p.v.sb + hk * p.v.sh + static_cast<std::int64_t>(span.start) * p.v.ss;
    unit = kVarlen ? hk : unit_offset(b, p.heads_kv, hk);
    row = kVarlen ? static_cast<int>(varlen_row_base(span.start, b)) : 0;
    ws_row0 = unit * p.w.unit_rows + row;
  }
  // Whether job `job` (kJobRows rows from job · kJobRows) lies past the region: a varlen
  // sequence shorter than the call's longest has no rows there, and such jobs skip their work.
  template <int D>
  __device__ __forceinline__ bool past_region(int job) const {
    return kVarlen && job * kJobRows<D> >= len_pad;
  }
  // 1 / len, K's mean's factor: the host's for dense calls; else the same correctly rounded
  // division (0 without keys), as the attention kernels compute it for Q's LSE term.
  __device__ __forceinline__ float inv_len(const JobPlan& p) const {
    if constexpr (!kVarlen) return p.inv_kv_len;
    return inverse_length(len);
  }
};

// Row s of the unit's sequence in the caller's K or V.
template <typename T>
__device__ __forceinline__ const T* row_ptr(const InputView& in, std::int64_t offset, int s) {
  return static_cast<const T*>(in.data) + offset + static_cast<std::int64_t>(s) * in.ss;
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
// need not wait for the unit's V (quant-split-barrier).
__device__ __forceinline__ std::uint32_t* statistics_counter(const JobPlan& p, std::int64_t unit,
                                                             bool is_v) {
  const int groups = barrier_groups(p);
  return p.w.job_counters + 1 + unit * groups + (is_v ? groups - 1 : 0);
}

}  // namespace
}  // namespace sageattn::detail
