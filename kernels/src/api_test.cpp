// The P·V path rule of the public header (sageattn.h: pv_path_for), which api.cpp's
// default_pv_path applies with the library's own has_sm90a().
#include <catch2/catch.hpp>

#include "sageattn/sageattn.h"

namespace sageattn {
namespace {

TEST_CASE("Hopper with sm_90a code takes the 16-bit wgmma kernel up to 8192 query rows", "[api]") {
  CHECK(pv_path_for(9, 0, true, 1) == PvPath::fp16_sm90);
  CHECK(pv_path_for(9, 0, true, kHopperPv16MaxQueryLen) == PvPath::fp16_sm90);
  CHECK(pv_path_for(9, 0, true, kHopperPv16MaxQueryLen + 1) == PvPath::fp8_sm90);
  // An unknown length (0 or less) is treated as a long one.
  CHECK(pv_path_for(9, 0, true, 0) == PvPath::fp8_sm90);
  CHECK(pv_path_for(9, 0, true, -1) == PvPath::fp8_sm90);
}

TEST_CASE("without sm_90a code, and off Hopper, the query length changes nothing", "[api]") {
  for (int rows : {0, 1, kHopperPv16MaxQueryLen, kHopperPv16MaxQueryLen + 1}) {
    CHECK(pv_path_for(9, 0, false, rows) == PvPath::fp16);  // e4m3 mma.sync is emulated there
    CHECK(pv_path_for(8, 0, true, rows) == PvPath::fp16);
    CHECK(pv_path_for(8, 6, true, rows) == PvPath::fp16);
    CHECK(pv_path_for(8, 9, true, rows) == PvPath::fp8);
    CHECK(pv_path_for(10, 0, true, rows) == PvPath::fp8);
    CHECK(pv_path_for(12, 0, false, rows) == PvPath::fp8);
  }
}

}  // namespace
}  // namespace sageattn
