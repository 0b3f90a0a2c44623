// The kernels' tiling rules, on host and device: the row and key blocks, the scale
// granularities, the constants of the softmax's exp2 domain, and which Hopper kernel (two, three
// or four consumer warpgroups, so which key block) a call runs. The kernels follow them, the
// workspace layout (src/workspace.h) sizes by them, and the host reference (reference/) rounds
// as they do.
#pragma once

#include "sageattn/sageattn.h"
#include "tile_config.h"

namespace sageattn::detail {

// The query rows' padding (the attention kernels' grids cover q_pad rows, and they quantize rows
// past qo_len as zeros) and the per_block scale granularity, in rows.
inline constexpr int kBlockM = 64;
inline constexpr int kBlockN = 64;  // keys per attention main-loop iteration
inline constexpr int kWarpRows = 16;
// The 16-bit P·V path's row-max headroom, in log2 units (attention.cuh; the host reference
// models it): the max it subtracts moves only when a block's max exceeds it by more than this.
inline constexpr float kMmaMaxHeadroom = SAGEATTN_MMA_MAX_HEADROOM;
inline constexpr float kLog2e = 1.4426950408889634f;      // Q's scales carry sm_scale·log2(e)
inline constexpr float kLog2Fp8Max = 8.807354922057604f;  // log2(448): P's scale, in exp2's domain
// The attention kernels find a key's scale with a shift by log2 of the rows per scale.
static_assert((kBlockM & (kBlockM - 1)) == 0 && (kWarpRows & (kWarpRows - 1)) == 0,
              "scale granularities are powers of two");

// How many consumer warpgroups the Hopper kernel runs for a call, and so its key block (the
// online softmax's block, which the host reference must match for the same rounding of P). The
// shapes that exist are the manifest's SM90_TILES rows (tile_config.h); a knob per head dim may
// force one (SAGEATTN_SM90_CONSUMERS_D64, _D128).
// Causal calls with fewer query rows than this keep two consumer warpgroups: 192-row tiles lose
// more to the diagonal than a third warpgroup gains (kernels/NOTES.md, sm90-d64-three-consumers
// and sm90-d128-pv16-three-consumers).
inline constexpr int kThreeConsumersMinCausalRows = 2048;

// Calls with at most this many query rows run four consumer warpgroups where that shape exists
// (d=64, 16-bit P·V: 256-row tiles, 64-key blocks): faster up to 4k, slower on long calls
// (kernels/NOTES.md, sm90-d64-four-consumers). At 1k, 192-row tiles compute 1,152 rows for 1,024.
inline constexpr int kFourConsumersMaxRows = 4096;

// Two where no three-consumer shape exists; else a forced count (four falls back to three where
// it does not exist), else four for short calls where it exists, three unless a causal call is
// short.
inline int sm90_consumer_warpgroups(int head_dim, PvPath path, bool causal, int qo_len) {
  const bool pv8 = uses_fp8_v(path);
  if (!sm90_has_tile(head_dim, pv8, 3)) return 2;
  const int forced = sm90_forced_consumers(head_dim);
  if (forced == 2) return 2;
  const bool four_fit = sm90_has_tile(head_dim, pv8, 4);
  if (forced == 4) return four_fit ? 4 : 3;
  if (forced == 3) return 3;
  if (four_fit && qo_len <= kFourConsumersMaxRows) return 4;
  return !causal || qo_len >= kThreeConsumersMinCausalRows ? 3 : 2;
}
// Keys per block of the Hopper kernel's main loop (its S tile's width), from its SM90_TILES row;
// 0 where the shape does not exist.
constexpr int sm90_key_block(int head_dim, bool pv8, int consumers) {
  const int row = sm90_tile_row(head_dim, pv8, consumers);
  return row >= 0 ? kSm90Tiles[row].key_block : 0;
}

inline int granularity_rows(Granularity g) {
  return g == Granularity::per_block ? kBlockM : kWarpRows;
}

}  // namespace sageattn::detail
