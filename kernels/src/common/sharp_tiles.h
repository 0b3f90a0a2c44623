// The sharp-tile guard's worklist, shared by the host (its size in the workspace), the attention
// kernels (which append to it) and the 16-bit Q·Kᵀ kernel (guard/sharp_redo.cuh, which works
// through it).
//
// INT8 Q·Kᵀ's error is a fixed fraction of the logits' size; where the largest logit reaches the
// hundreds, that is enough to move weight between a row's top keys (docs/kernels.md, "Sharp
// attention"). The attention kernels know each row's largest logit exactly at their epilogue (the
// online softmax's row max), so they are the detector: a 64-row tile with a row above the
// threshold is appended here, and the sharp kernel, launched after them on the same stream,
// computes those tiles again from the caller's 16-bit Q, K and V and overwrites their O and LSE.
// Nothing is read on the host, so a call stays one asynchronous sequence of launches (CUDA graphs).
#pragma once

#include <cstdint>

#include "sageattn/sageattn.h"

namespace sageattn::detail {

// Query rows per entry: a Hopper consumer warpgroup's, or 2 or 4 warps of the mma.sync kernel.
inline constexpr int kSharpTileRows = 64;

// One flagged tile: its sequence as the attention kernel resolved it, so that the sharp kernel
// needs no second look at the varlen offsets. b: the batch (dense calls; varlen: the sequence).
struct SharpTile {
  int b, head, row0;
  int q_start, q_len, kv_start, kv_len;
  int unused;
};
static_assert(sizeof(SharpTile) == 32, "two 16-byte stores");

// Entries the worklist can need: every 64-row tile of every query head. A varlen sequence of n
// rows has ceil(n / 64) tiles, at most n / 64 + 1.
inline std::int64_t sharp_tile_capacity(const Params& p) {
  const std::int64_t per_head =
      p.is_varlen()
          ? static_cast<std::int64_t>(p.varlen.total_q) / kSharpTileRows + p.batch
          : static_cast<std::int64_t>(p.batch) * ((p.qo_len + kSharpTileRows - 1) / kSharpTileRows);
  return per_head * p.heads_q;
}

}  // namespace sageattn::detail
