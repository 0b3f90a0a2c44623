// The attention mask, for every kernel and the host reference: the mma.sync and Hopper attention
// kernels, the sharp-tile kernel (guard/) and reference/. A kernel asks a KeyMask which keys a
// query row sees, how many key blocks a tile of rows reads, and which of them need the mask
// applied per element; it never tests the kind of mask itself. A new kind (a sliding window) is
// one more Kind and its cases in the four questions below, which mask_test.cpp checks against
// `visible` asked key by key.
//
// Kinds: none (every key below kv_len), and causal aligned bottom-right: query row r (counted
// from its sequence's first query) sees key k when k <= r + kv_len - q_len, so the last query
// sees every key whatever the lengths (sageattn.h: Params::causal). A tile of rows walks keys in
// blocks of `block`; it reads every block holding a key its last row sees, and only blocks that
// cross kv_len or the diagonal of its first row need the mask applied per element.
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

struct KeyMask {
  enum class Kind : unsigned char { none, causal_bottom_right };

  // The call's kind, where the call keeps it: in a kernel, the kernel parameter itself, so that
  // every test reads it from there as the bool it replaced was read (the same machine code; a
  // copy held in a register costs the Hopper consumer registers it does not have).
  const Kind& kind;
  int kv_len;  // keys of the sequence
  int offset;  // kv_len - q_len (diagonal_offset), for the causal diagonal

  // The kind a call asks for (sageattn.h: Params::causal).
  SAGEATTN_HOST_DEVICE static Kind kind_of_call(bool causal) {
    return causal ? Kind::causal_bottom_right : Kind::none;
  }
  // The mask of one sequence of a call whose kind `kind` is (and outlives the mask).
  SAGEATTN_HOST_DEVICE static KeyMask of_sequence(const Kind& kind, int q_len, int kv_len) {
    return {kind, kv_len, diagonal_offset(q_len, kv_len)};
  }
  static KeyMask of_sequence(Kind&& kind, int q_len, int kv_len) = delete;  // would dangle
  // Whether a grid should start with its last query tiles: under this kind they read the most
  // key blocks.
  SAGEATTN_HOST_DEVICE static bool last_rows_longest(Kind kind) { return kind != Kind::none; }

  // Written as "not none" while causal is the only other kind: the kernels then test the byte
  // as they tested the bool it replaced.
  SAGEATTN_HOST_DEVICE bool causal() const { return kind != Kind::none; }

  // The questions below keep the kernels' machine code as it was when they asked free functions
  // with a bool flag: visible() hands its helper plain values, evaluated at the call as those
  // arguments were, and block_masked() tests without short-circuits (a kind read behind one
  // cannot be hoisted, and the compiler wrote the test as selects). lab/sass/sass_same.sh
  // compares the machine code.

  // Whether query row `row` may see key `key` (both counted from the sequence's start).
  SAGEATTN_HOST_DEVICE bool visible(int key, int row) const {
    return visible(key, row, kv_len, causal(), offset);
  }

  // How many key blocks a tile whose last row is `last_row` reads: all of them, or under the
  // causal mask those up to the one holding its last row's last visible key (none when that row
  // sees no key).
  SAGEATTN_HOST_DEVICE int key_blocks(int block, int last_row) const {
    int n = (kv_len + block - 1) / block;
    if (causal()) {
      const int last_key = last_row + offset;
      n = last_key < 0 ? 0 : int_min(n, last_key / block + 1);
    }
    return n;
  }

  // Whether the key block starting at n0 needs the mask for a tile whose first row is
  // `first_row`: it holds keys past kv_len, or keys right of that row's diagonal.
  SAGEATTN_HOST_DEVICE bool block_masked(int n0, int block, int first_row) const {
    const bool causal_mask = causal();
    return (n0 + block > kv_len) | (causal_mask & (n0 + block - 1 > first_row + offset));
  }

  // The key blocks before which no block needs the mask (block_masked is false for every one of
  // them), of the tile's n_blocks.
  SAGEATTN_HOST_DEVICE int unmasked_key_blocks(int n_blocks, int block, int first_row) const {
    int n = int_min(n_blocks, kv_len / block);
    if (causal()) n = int_min(n, int_max(first_row + offset + 1, 0) / block);
    return n;
  }

 private:
  // visible() over plain values.
  SAGEATTN_HOST_DEVICE static bool visible(int key, int row, int kv_len, bool causal, int offset) {
    return key < kv_len && !(causal && key > row + offset);
  }
};

}  // namespace sageattn::detail
