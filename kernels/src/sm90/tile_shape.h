// The Hopper kernel's key block (keys per main-loop iteration) per head dim. In a header of its
// own, without CUDA, because the host reference (reference/reference.cpp) must cut the keys
// into the same blocks: P is rounded to e4m3 against the running max as of each block.
#pragma once

// Multiples of 64 up to 256 (kernels/NOTES.md, s27, has what each measured). A wider block
// spreads the per-block work (the row max's tree and shuffles, O's merge, the barriers and the
// turn's hand-over) over more keys; it needs S's registers (block/2 per thread) beside O's.
#ifndef SAGEATTN_SM90_BLOCK_N_D128
#define SAGEATTN_SM90_BLOCK_N_D128 128
#endif
#ifndef SAGEATTN_SM90_BLOCK_N_D64
#define SAGEATTN_SM90_BLOCK_N_D64 128
#endif

namespace sageattn::detail {

constexpr int sm90_block_n(int head_dim) {
  return head_dim == 64 ? SAGEATTN_SM90_BLOCK_N_D64 : SAGEATTN_SM90_BLOCK_N_D128;
}

}  // namespace sageattn::detail
