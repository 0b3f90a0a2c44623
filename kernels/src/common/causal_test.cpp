// causal.h against the mask itself: over random shapes (more queries than keys, fewer, equal,
// rows before the first visible key), every tile's key-block count and unmasked prefix agree
// with key_visible asked key by key.
#include "causal.h"

#include <random>

#include <catch2/catch.hpp>

namespace sageattn::detail {
namespace {

TEST_CASE("the causal mask is aligned bottom-right", "[causal]") {
  // 3 queries, 5 keys: the last query sees every key, the first the first three.
  CHECK(diagonal_offset(3, 5) == 2);
  CHECK(key_visible(2, 0, 5, true, 2));
  CHECK_FALSE(key_visible(3, 0, 5, true, 2));
  CHECK(key_visible(4, 2, 5, true, 2));
  CHECK_FALSE(key_visible(5, 2, 5, false, 2));  // past kv_len, causal or not
  // 5 queries, 3 keys: the first two see none.
  CHECK_FALSE(key_visible(0, 1, 3, true, -2));
  CHECK(key_visible(0, 2, 3, true, -2));
}

TEST_CASE("key blocks and the unmasked prefix agree with the mask key by key", "[causal]") {
  std::mt19937 rng(20261128);
  for (int trial = 0; trial < 3000; ++trial) {
    const int q_len = std::uniform_int_distribution<int>(1, 700)(rng);
    const int kv_len = std::uniform_int_distribution<int>(1, 700)(rng);
    const int block = trial % 2 ? 64 : 128;
    const int tile_rows = trial % 3 ? 64 : 128;
    const bool causal = trial % 5 != 0;
    const int offset = diagonal_offset(q_len, kv_len);
    for (int first = 0; first < q_len; first += tile_rows) {
      const int last = (first + tile_rows < q_len ? first + tile_rows : q_len) - 1;
      // The block after the last one holding a key some row of the tile sees.
      int needed = 0;
      for (int key = 0; key < kv_len; ++key)
        for (int row = first; row <= last; ++row)
          if (key_visible(key, row, kv_len, causal, offset)) needed = key / block + 1;
      const int n_blocks = key_blocks(kv_len, block, causal, last, offset);
      INFO("q_len " << q_len << ", kv_len " << kv_len << ", block " << block << ", rows " << first
                    << ".." << last << ", causal " << causal);
      REQUIRE(n_blocks == needed);
      const int unmasked = unmasked_key_blocks(n_blocks, kv_len, block, causal, first, offset);
      REQUIRE(unmasked <= n_blocks);
      for (int nb = 0; nb < n_blocks; ++nb) {
        bool all_visible = true;
        for (int key = nb * block; key < (nb + 1) * block && all_visible; ++key)
          for (int row = first; row <= last && all_visible; ++row)
            all_visible = key_visible(key, row, kv_len, causal, offset);
        // A block the kernels do not mask must have every key visible to every row; the
        // unmasked prefix is exactly the blocks before the first one that needs the mask.
        REQUIRE(block_masked(nb * block, block, kv_len, causal, first, offset) == !all_visible);
        REQUIRE((nb < unmasked) ==
                (nb < unmasked && !block_masked(nb * block, block, kv_len, causal, first, offset)));
      }
      if (unmasked < n_blocks) {
        REQUIRE(block_masked(unmasked * block, block, kv_len, causal, first, offset));
      }
    }
  }
}

}  // namespace
}  // namespace sageattn::detail
