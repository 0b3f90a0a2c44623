// built_head_dims.h's reading of the list CMake writes (kernels/CMakeLists.txt:
// SAGEATTN_HEAD_DIMS), checked at compile time as the kernels use it.
#define SAGEATTN_BUILT_HEAD_DIMS "64 128"
#include "built_head_dims.h"

#include <catch2/catch.hpp>

namespace sageattn::detail {
namespace {

TEST_CASE("a build of some head dims knows which", "[built_head_dims]") {
  static_assert(head_dim_built(64) && head_dim_built(128));
  static_assert(!head_dim_built(96) && !head_dim_built(6) && !head_dim_built(12) &&
                !head_dim_built(1280) && !head_dim_built(0));
  CHECK(lists_head_dim("", 96));  // no list: every head dim
  CHECK(lists_head_dim("256", 256));
  CHECK_FALSE(lists_head_dim("256", 25));
  CHECK(lists_head_dim("  64   96 ", 96));
  CHECK_FALSE(lists_head_dim(" ", 64));  // spaces only: a list of none
}

}  // namespace
}  // namespace sageattn::detail
