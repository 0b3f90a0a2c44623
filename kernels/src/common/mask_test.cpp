// mask.h against the mask itself: for every kind, over random shapes (more queries than keys,
// fewer, equal, rows before the first visible key), every tile's key-block count and unmasked
// prefix agree with KeyMask::visible asked key by key. A new kind joins kKinds below.
#include "mask.h"

#include <random>

#include <catch2/catch.hpp>

namespace sageattn::detail {
namespace {

constexpr KeyMask::Kind kKinds[] = {KeyMask::Kind::none, KeyMask::Kind::causal_bottom_right};

TEST_CASE("the causal mask is aligned bottom-right", "[mask]") {
  // 3 queries, 5 keys: the last query sees every key, the first the first three.
  const KeyMask::Kind causal = KeyMask::Kind::causal_bottom_right, none = KeyMask::Kind::none;
  const KeyMask wide = KeyMask::of_sequence(causal, 3, 5);
  CHECK(wide.offset == 2);
  CHECK(wide.visible(2, 0));
  CHECK_FALSE(wide.visible(3, 0));
  CHECK(wide.visible(4, 2));
  CHECK_FALSE(wide.visible(5, 2));  // past kv_len, causal or not
  CHECK_FALSE(KeyMask::of_sequence(none, 3, 5).visible(5, 2));
  CHECK(KeyMask::of_sequence(none, 3, 5).visible(4, 0));
  // 5 queries, 3 keys: the first two see none.
  const KeyMask tall = KeyMask::of_sequence(causal, 5, 3);
  CHECK_FALSE(tall.visible(0, 1));
  CHECK(tall.visible(0, 2));
  CHECK(KeyMask::kind_of_call(true) == KeyMask::Kind::causal_bottom_right);
  CHECK(KeyMask::kind_of_call(false) == KeyMask::Kind::none);
}

TEST_CASE("key blocks and the unmasked prefix agree with the mask key by key", "[mask]") {
  std::mt19937 rng(20261128);
  for (int trial = 0; trial < 3000; ++trial) {
    const int q_len = std::uniform_int_distribution<int>(1, 700)(rng);
    const int kv_len = std::uniform_int_distribution<int>(1, 700)(rng);
    const int block = trial % 2 ? 64 : 128;
    const int tile_rows = trial % 3 ? 64 : 128;
    const KeyMask::Kind& kind = kKinds[trial % std::size(kKinds)];
    const KeyMask mask = KeyMask::of_sequence(kind, q_len, kv_len);
    // The last rows read the most key blocks exactly where the grid is told to start there.
    const int first_tile = mask.key_blocks(block, (tile_rows < q_len ? tile_rows : q_len) - 1);
    const int last_tile = mask.key_blocks(block, q_len - 1);
    if (!KeyMask::last_rows_longest(kind)) REQUIRE(first_tile == last_tile);
    for (int first = 0; first < q_len; first += tile_rows) {
      const int last = (first + tile_rows < q_len ? first + tile_rows : q_len) - 1;
      // The block after the last one holding a key some row of the tile sees.
      int needed = 0;
      for (int key = 0; key < kv_len; ++key)
        for (int row = first; row <= last; ++row)
          if (mask.visible(key, row)) needed = key / block + 1;
      const int n_blocks = mask.key_blocks(block, last);
      INFO("q_len " << q_len << ", kv_len " << kv_len << ", block " << block << ", rows " << first
                    << ".." << last << ", kind " << static_cast<int>(kind));
      REQUIRE(n_blocks == needed);
      REQUIRE(n_blocks <= last_tile);
      const int unmasked = mask.unmasked_key_blocks(n_blocks, block, first);
      REQUIRE(unmasked <= n_blocks);
      for (int nb = 0; nb < n_blocks; ++nb) {
        bool all_visible = true;
        for (int key = nb * block; key < (nb + 1) * block && all_visible; ++key)
          for (int row = first; row <= last && all_visible; ++row)
            all_visible = mask.visible(key, row);
        // A block the kernels do not mask must have every key visible to every row; the
        // unmasked prefix is exactly the blocks before the first one that needs the mask.
        REQUIRE(mask.block_masked(nb * block, block, first) == !all_visible);
        if (nb < unmasked) REQUIRE_FALSE(mask.block_masked(nb * block, block, first));
      }
      if (unmasked < n_blocks) REQUIRE(mask.block_masked(unmasked * block, block, first));
    }
  }
}

}  // namespace
}  // namespace sageattn::detail
