// The Hopper kernel's choice of consumer warpgroups and key block (workspace.h): the launcher
// and the host reference must agree on it, since the key block sets how P is rounded.
#include "workspace.h"

#include <catch2/catch.hpp>

namespace sageattn::detail {
namespace {

TEST_CASE("the Hopper kernel runs three consumer warpgroups where they fit and pay",
          "[workspace]") {
  for (PvPath path : {PvPath::fp8_sm90, PvPath::fp16_sm90}) {
    CHECK(sm90_consumer_warpgroups(64, path, false, 1) == 3);
    CHECK(sm90_consumer_warpgroups(64, path, false, 32768) == 3);
    // Short causal calls keep two: 192-row tiles lose more to the diagonal than they gain.
    CHECK(sm90_consumer_warpgroups(64, path, true, kThreeConsumersMinCausalRows - 1) == 2);
    CHECK(sm90_consumer_warpgroups(64, path, true, kThreeConsumersMinCausalRows) == 3);
  }
  CHECK(sm90_consumer_warpgroups(128, PvPath::fp16_sm90, false, 17) == 3);
  CHECK(sm90_consumer_warpgroups(128, PvPath::fp16_sm90, true, 1000) == 2);
  CHECK(sm90_consumer_warpgroups(128, PvPath::fp16_sm90, true, 4097) == 3);
  // FP8 P·V at d=128: three fit only with its second-level accumulator in parts, and were
  // 10% slower (kernels/NOTES.md, s35).
  CHECK(sm90_consumer_warpgroups(128, PvPath::fp8_sm90, false, 32768) == 2);
}

TEST_CASE("the key block is 64 only for three consumer warpgroups at d=128", "[workspace]") {
  CHECK(sm90_key_block(128, 3) == 64);
  CHECK(sm90_key_block(128, 2) == 128);
  CHECK(sm90_key_block(64, 3) == 128);
  CHECK(sm90_key_block(64, 2) == 128);
}

}  // namespace
}  // namespace sageattn::detail
