// The kernels' tiling rules, on host and device: the row and key blocks, the scale
// granularities, the constants of the softmax's exp2 domain, and which Hopper kernel (two, three
// or four consumer warpgroups, so which key block) a call runs. The kernels follow them, the
// workspace layout (src/workspace.h) sizes by them, and the host reference (reference/) rounds
// as they do.
#pragma once

#include "sageattn/sageattn.h"

namespace sageattn::detail {

// The query rows' padding (the attention kernels' grids cover q_pad rows, and they quantize rows
// past qo_len as zeros) and the per_block scale granularity, in rows.
inline constexpr int kBlockM = 64;
inline constexpr int kBlockN = 64;  // keys per attention main-loop iteration
inline constexpr int kWarpRows = 16;
// The 16-bit P·V path's row-max headroom, in log2 units (attention.cuh; the host reference
// models it): the max it subtracts moves only when a block's max exceeds it by more than this.
#ifndef SAGEATTN_MMA_MAX_HEADROOM
#define SAGEATTN_MMA_MAX_HEADROOM 8
#endif
inline constexpr float kMmaMaxHeadroom = SAGEATTN_MMA_MAX_HEADROOM;
inline constexpr float kLog2e = 1.4426950408889634f;      // Q's scales carry sm_scale·log2(e)
inline constexpr float kLog2Fp8Max = 8.807354922057604f;  // log2(448): P's scale, in exp2's domain
// The attention kernels find a key's scale with a shift by log2 of the rows per scale.
static_assert((kBlockM & (kBlockM - 1)) == 0 && (kWarpRows & (kWarpRows - 1)) == 0,
              "scale granularities are powers of two");

// How many consumer warpgroups the Hopper kernel runs for a call, and so its key block (the
// online softmax's block, which the host reference must match for the same rounding of P).
// Knobs per head dim: see sm90_consumer_warpgroups (kernels/NOTES.md, sm90-d64-three-consumers,
// sm90-d128-pv16-three-consumers and sm90-d64-four-consumers).
#ifndef SAGEATTN_SM90_CONSUMERS_D64
#define SAGEATTN_SM90_CONSUMERS_D64 0
#endif
#ifndef SAGEATTN_SM90_CONSUMERS_D128
#define SAGEATTN_SM90_CONSUMERS_D128 0
#endif
// Causal calls with fewer query rows than this keep two consumer warpgroups: 192-row tiles lose
// more to the diagonal than a third warpgroup gains (kernels/NOTES.md, sm90-d64-three-consumers
// and sm90-d128-pv16-three-consumers).
inline constexpr int kThreeConsumersMinCausalRows = 2048;

// Calls at d=64 with 16-bit P·V and at most this many query rows run four consumer
// warpgroups (256-row tiles, 64-key blocks): faster up to 4k, slower on long calls
// (kernels/NOTES.md, sm90-d64-four-consumers). At 1k, 192-row tiles compute 1,152 rows for 1,024.
inline constexpr int kFourConsumersMaxRows = 4096;

// 3 at d=64 (both P·V types) and, 16-bit P·V only, at d=128, where O, S and P fit the 160
// registers of three only with 64-key blocks. The e4m3 path's second-level accumulator fits
// there only when computed in two parts of channels, and that was slower
// (sm90-d128-e4m3-three-consumers, sm90-o-prime-in-two-parts). 4 at d=64 with 16-bit P·V on short
// calls (112 registers each: the e4m3 path's O' does not fit). Knobs per head dim: 2, 3, 4 (d=64,
// 16-bit P·V; else 3), or 0 for the rule.
// d=192 and 256 (16-bit P·V only): 2, whose 240 registers hold O (100 or 132 floats) beside a
// 64-key S tile; d=96 (16-bit P·V only): 2, with 128-key blocks.
inline int sm90_consumer_warpgroups(int head_dim, PvPath path, bool causal, int qo_len) {
  if (head_dim != 64 && head_dim != 128) return 2;
  // Two knobs that share a default, not a cloned branch.
  // NOLINTBEGIN(bugprone-branch-clone)
  const int knob = head_dim == 64 ? SAGEATTN_SM90_CONSUMERS_D64 : SAGEATTN_SM90_CONSUMERS_D128;
  // NOLINTEND(bugprone-branch-clone)
  if (knob == 2 || (head_dim == 128 && uses_fp8_v(path))) return 2;
  const bool four_fit = head_dim == 64 && !uses_fp8_v(path);
  if (knob == 4) return four_fit ? 4 : 3;
  if (knob == 3) return 3;
  if (four_fit && qo_len <= kFourConsumersMaxRows) return 4;
  return !causal || qo_len >= kThreeConsumersMinCausalRows ? 3 : 2;
}
// Keys per block of the Hopper kernel's main loop (its S tile's width): 64 where the registers
// of three (d=128) or four (d=64) consumer warpgroups, or O at d=192 and 256, hold no wider S
// tile.
constexpr int sm90_key_block(int head_dim, int consumers) {
  return (head_dim == 128 && consumers == 3) || consumers == 4 || head_dim > 128 ? 64 : 128;
}

inline int granularity_rows(Granularity g) {
  return g == Granularity::per_block ? kBlockM : kWarpRows;
}

}  // namespace sageattn::detail
