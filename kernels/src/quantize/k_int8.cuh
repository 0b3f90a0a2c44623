// K to INT8: rows smoothed by their unit's mean, scaled per 16- or 64-row group by max |k|,
// rounded, written to the workspace with their scales.
// Part of quantize.cu's one translation unit (its anonymous namespace): included there only.
#pragma once

#include "common.cuh"
#include "statistics.cuh"

namespace sageattn::detail {
namespace {

// --- K to INT8 ------------------------------------------------------------------------------
// (Q is quantized by the attention kernels themselves, as they read it: q_int8.cuh.)

// A rows job's unit: its rows of the caller's K (from `in`, `len` of them), its region of the
// workspace (`out` and `scales` at its first row; len_pad rows written), and its mean.
struct RowsTarget {
  const void* in;
  std::int64_t in_ss;  // the input's row stride, elements
  int len, len_pad, rows_per_scale;
  std::int8_t* out;
  float* scales;
  // K's column sums of this unit, staged in shared memory by wait_for_statistics (quantize
  // x - mean(K)), or nullptr; and 1 / len
  const float* k_sum;
  float inv_len;
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
__device__ void issue_rows(const RowsTarget& t, int job, const Stage<D>& stage) {
  const RowsThread<D> th(job, t.len_pad);
  const T* src =
      static_cast<const T*>(t.in) + static_cast<std::int64_t>(th.row0) * t.in_ss + th.col;
  const std::int64_t step = t.in_ss * kRowsPerLoad<D>;
  const bool lane_active = th.active && channel_lane<D>(th.col);
#pragma unroll
  for (int l = 0; l < kLoadsPerThread; ++l, src += step)
    stage.copy(l, src, lane_active && th.row0 + l * kRowsPerLoad<D> < t.len, t.in);
}

// The rest of a rows job, once this thread's copies have landed.
// A warp's maxima are taken per group of kGroupRows rows: the 16 of a per_warp scale, or at
// d=256, where a warp's loads cover 8 rows, half of one (the scale's two halves meet in shared
// memory, as a per_block scale's groups do).
template <typename T, int D>
__device__ void quantize_rows(const RowsTarget& t, int job, const Stage<D>& stage, float* scratch) {
  constexpr int kGroupRows = kWarpRows<D> < kScaleRows ? kWarpRows<D> : kScaleRows;
  constexpr int kLoadsPerGroup = kGroupRows / kRowsPerLoad<D>;
  constexpr int kGroupsPerWarp = kWarpRows<D> / kGroupRows;
  const RowsThread<D> th(job, t.len_pad);
  const int warp = th.warp, lane = th.lane, col = th.col, warp_row0 = th.warp_row0;
  const int row0 = th.row0;
  const bool active = th.active;
  float mean[8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    mean[i] = t.k_sum && channel_lane<D>(col) ? t.k_sum[col + i] * t.inv_len : 0.f;
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
  if (!active || !channel_lane<D>(col)) return;  // (no barrier below)
  const int groups_per_scale = t.rows_per_scale / kGroupRows;
  std::int8_t* dst = t.out + static_cast<std::int64_t>(row0) * D + col;
#pragma unroll
  for (int g = 0; g < kGroupsPerWarp; ++g) {
    const int group = warp * kGroupsPerWarp + g;
    const int first = group / groups_per_scale * groups_per_scale;
    float amax = group_max[first];
    for (int j = 1; j < groups_per_scale; ++j)
      amax = fmaxf(amax, group_max[first + j]);
    const float inv = device::int8_inverse_scale(amax);
    const int group_row0 = warp_row0 + g * kGroupRows;
    if (lane == 0 && group_row0 % t.rows_per_scale == 0) {
      t.scales[group_row0 / t.rows_per_scale] = device::int8_scale(amax, 1.f);
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

}  // namespace
}  // namespace sageattn::detail
