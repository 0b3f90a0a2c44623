// V to FP8 e4m3 for the fp8 paths: per channel scaled by fp8_v_max / max|v| (448, or 2.25 where
// key blocks are summed in FP16), transposed to [D][keys] with the keys permuted in groups of 32
// as the attention kernels' P fragments need.
// Part of quantize.cu's one translation unit (its anonymous namespace): included there only.
#pragma once

#include "common.cuh"
#include "statistics.cuh"

namespace sageattn::detail {
namespace {

// --- V to FP8 ---------------------------------------------------------------------------------

// The 4 keys whose e4m3 values sit at positions 4·quad .. 4·quad+3 of a tile. Within each
// group of 32 keys the FP8 P·V mma's k index 4t+i (i < 2) is key 2t+i and 4t+i (i >= 2) is
// key 8+2t+i-2, per half of 16: where the P fragment left by the Q·Kᵀ mma already holds those
// keys (mma/attention.cuh). So a quad of positions is keys {first, first+1, first+8, first+9}.
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

// V to FP8 e4m3 with its per-channel scale v_fp8_max / max|v|, transposed to [D][keys] with the
// keys permuted (above) and the padding zeroed: kJobRows<D> keys (fewer for the last job of a head,
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

// Keys of the job's region written (the unit's keys, then zeros up to its len_pad; ≤ 0 for a job
// past a varlen sequence's region, which writes nothing).
template <int D, bool kVarlen>
__device__ __forceinline__ int v_job_keys(const UnitSequence<kVarlen>& seq, int job) {
  return min(kJobRows<D>, seq.len_pad - job * kJobRows<D>);
}

// A V job's copies into the stage (not committed): task j's 4 keys in slots 4j..4j+3.
template <typename T, int D, bool kVarlen>
__device__ void issue_v(const JobPlan& p, int b, int hk, int job, const Stage<D>& stage) {
  const VTasks<D> tasks;
  const UnitSequence<kVarlen> seq(p, b, hk);
  const int key0 = job * kJobRows<D>, keys = v_job_keys<D>(seq, job);
#pragma unroll
  for (int j = 0; j < VTasks<D>::kPerThread; ++j) {
    const int first = key0 + quad_first_key(tasks.quad[j]);
    const T* src = row_ptr<T>(p.v, seq.v_offset, first) + tasks.group[j] * 8;
    constexpr int kKeyOffset[4] = {0, 1, 8, 9};
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      stage.copy(4 * j + r, src + kKeyOffset[r] * p.v.ss,
                 tasks.quad[j] * 4 < keys && first + kKeyOffset[r] < seq.len, p.v.data);
    }
  }
}

// The rest of a V job, once this thread's copies have landed: 8 words of 4 e4m3 bytes each
// written to the tile, then the tile's rows go out as 16-byte stores.
template <typename T, int D, bool kVarlen>
__device__ void quantize_v(const JobPlan& p, int b, int hk, int job, const Stage<D>& stage,
                           std::uint32_t* tile) {
  const VTasks<D> tasks;
  const UnitSequence<kVarlen> seq(p, b, hk);
  const int key0 = job * kJobRows<D>, keys = v_job_keys<D>(seq, job);
  const float* amax = p.w.v_amax + unit_offset(b, p.heads_kv, hk) * D;  // the sequence's
  // The task's 8 channel maxima as two 16-byte L2 loads, all issued before the first use (one
  // at a time, each waited for before its conversions, they were the V jobs' top stall,
  // quant-fused-pipelined). (Staged through shared memory as K's sums are, they were slower at
  // d=64: the tile then has to wait for every thread's reads, quant-mean-in-smem.)
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
      const float inv = m[i] > 0.f ? p.v_fp8_max / m[i] : 0.f;
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
  std::uint8_t* out = p.w.v + seq.unit * D * p.w.unit_rows + seq.row + key0;
  for (int i = threadIdx.x; i < D * kChunks; i += kThreads<D>) {
    const int c = i / kChunks, chunk = i % kChunks;
    if (chunk * 16 >= keys) continue;
    *reinterpret_cast<uint4*>(out + static_cast<std::int64_t>(c) * p.w.unit_rows + chunk * 16) =
        *reinterpret_cast<const uint4*>(tile + tile_word<D>(c, chunk * 4));
  }
}

// The next job's ticket (one atomic per job). Relaxed: a ticket only says which job to do; the
// statistics are ordered by their own counters.
__device__ inline int take_ticket(const JobPlan& p) {
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device> tickets(p.w.job_counters[0]);
  return static_cast<int>(tickets.fetch_add(1u, cuda::memory_order_relaxed));
}

// K's rows job target for unit (b, hk) (its smoothing mean set by the caller).
template <int D, bool kVarlen>
__device__ inline RowsTarget k_target(const JobPlan& p, int b, int hk) {
  const UnitSequence<kVarlen> seq(p, b, hk);
  RowsTarget k{};
  k.in = static_cast<const char*>(p.k.data) + 2 * seq.k_offset;  // 16-bit elements
  k.in_ss = p.k.ss;
  k.len = seq.len;
  k.len_pad = seq.len_pad;
  k.rows_per_scale = p.w.k_rows;
  k.out = p.w.k + seq.ws_row0 * D;
  // (unit_rows and a varlen region's first row are multiples of 64: whole scale groups)
  k.scales =
      p.w.k_scale + seq.unit * p.w.unit_scales + (kVarlen ? seq.row >> (__ffs(p.w.k_rows) - 1) : 0);
  k.inv_len = seq.inv_len(p);
  return k;
}

}  // namespace
}  // namespace sageattn::detail
