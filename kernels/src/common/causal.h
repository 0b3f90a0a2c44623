// The causal mask and the key blocks it leaves, for every kernel and the host reference: the
// mma.sync and Hopper attention kernels, the sharp-tile kernel (guard/) and reference/.
//
// The mask is aligned bottom-right: query row r (counted from its sequence's first query) sees
// key k when k <= r + kv_len - q_len, so the last query sees every key whatever the lengths
// (sageattn.h: Params::causal). A tile of rows walks keys in blocks of `block`; it reads every
// block holding a key its last row sees, and only blocks that cross kv_len or the diagonal of
// its first row need the mask applied per element.
#pragma once

#include "host_device.h"

namespace sageattn::detail {

// min and max of ints: CUDA's own on the device (the forms its instruction selection knows, e.g.
// an add fused into the min), the plain ones on the host.
SAGEATTN_HOST_DEVICE inline int int_min(int a, int b) {
#if defined(__CUDA_ARCH__)
  return min(a, b);
#else
  return a < b ? a : b;
#endif
}
SAGEATTN_HOST_DEVICE inline int int_max(int a, int b) {
#if defined(__CUDA_ARCH__)
  return max(a, b);
#else
  return a > b ? a : b;
#endif
}

// kv_len - q_len: how far right of the square diagonal the causal diagonal lies.
SAGEATTN_HOST_DEVICE inline int diagonal_offset(int q_len, int kv_len) {
  return kv_len - q_len;
}

// Whether query row `row` may see key `key` (both counted from the sequence's start).
SAGEATTN_HOST_DEVICE inline bool key_visible(int key, int row, int kv_len, bool causal,
                                             int offset) {
  return key < kv_len && !(causal && key > row + offset);
}

// How many key blocks a tile whose last row is `last_row` reads: all of them, or under the
// causal mask those up to the one holding its last row's last visible key (none when that row
// sees no key).
SAGEATTN_HOST_DEVICE inline int key_blocks(int kv_len, int block, bool causal, int last_row,
                                           int offset) {
  int n = (kv_len + block - 1) / block;
  if (causal) {
    const int last_key = last_row + offset;
    n = last_key < 0 ? 0 : int_min(n, last_key / block + 1);
  }
  return n;
}

// Whether the key block starting at n0 needs the mask for a tile whose first row is
// `first_row`: it holds keys past kv_len, or keys right of that row's diagonal.
SAGEATTN_HOST_DEVICE inline bool block_masked(int n0, int block, int kv_len, bool causal,
                                              int first_row, int offset) {
  return n0 + block > kv_len || (causal && n0 + block - 1 > first_row + offset);
}

// The key blocks before which no block needs the mask (block_masked is false for every one of
// them), of the tile's n_blocks.
SAGEATTN_HOST_DEVICE inline int unmasked_key_blocks(int n_blocks, int kv_len, int block,
                                                    bool causal, int first_row, int offset) {
  int n = int_min(n_blocks, kv_len / block);
  if (causal) n = int_min(n, int_max(first_row + offset + 1, 0) / block);
  return n;
}

}  // namespace sageattn::detail
