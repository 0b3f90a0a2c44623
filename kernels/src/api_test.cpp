// The public header's rules (sageattn.h): the P·V path for a GPU (pv_path_for, which
// api.cpp's default_pv_path applies with the library's own has_sm90a()), what each path needs of
// the GPU (capability_gap, behind validate()'s refusals), and the head dims taken.
#include <string>

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

TEST_CASE("the capability rule: what each path needs", "[api]") {
  using G = CapabilityGap;
  for (PvPath path : {PvPath::fp16, PvPath::fp8, PvPath::fp8_sm90, PvPath::fp16_sm90}) {
    CHECK(capability_gap(path, 7, 5, true) == G::below_sm80);
  }
  CHECK(capability_gap(PvPath::fp16, 8, 0, false) == G::none);
  CHECK(capability_gap(PvPath::fp8, 8, 6, true) == G::fp8_needs_sm89);
  CHECK(capability_gap(PvPath::fp8, 8, 9, false) == G::none);
  CHECK(capability_gap(PvPath::fp8, 12, 0, false) == G::none);
  CHECK(capability_gap(PvPath::fp8_sm90, 8, 9, true) == G::hopper_only);
  CHECK(capability_gap(PvPath::fp16_sm90, 10, 0, true) == G::hopper_only);
  CHECK(capability_gap(PvPath::fp8_sm90, 9, 0, false) == G::no_sm90a_code);
  CHECK(capability_gap(PvPath::fp16_sm90, 9, 0, true) == G::none);
  // Whatever pv_path_for picks can run where it picked it.
  for (int cc : {80, 86, 87, 89, 90, 100, 103, 110, 120, 121}) {
    for (bool sm90a : {false, true}) {
      CHECK(capability_gap(pv_path_for(cc / 10, cc % 10, sm90a, 1), cc / 10, cc % 10, sm90a) ==
            G::none);
    }
  }
}

TEST_CASE("supported head dims", "[api]") {
  CHECK(is_supported_head_dim(64));
  CHECK(is_supported_head_dim(128));
  CHECK(is_supported_head_dim(96));
  CHECK(is_supported_head_dim(192));
  CHECK(is_supported_head_dim(256));
  CHECK_FALSE(is_supported_head_dim(80));
  CHECK_FALSE(is_supported_head_dim(0));
  CHECK_FALSE(is_supported_head_dim(512));
}

TEST_CASE("head dims per path: FP8 P·V up to 128, 96 and 192 on the Hopper kernel only", "[api]") {
  for (PvPath path : {PvPath::fp16, PvPath::fp8, PvPath::fp8_sm90, PvPath::fp16_sm90}) {
    CHECK(path_supports_head_dim(path, 64));
    CHECK(path_supports_head_dim(path, 128));
    CHECK(path_supports_head_dim(path, 256) == !uses_fp8_v(path));
    CHECK(path_supports_head_dim(path, 192) == (path == PvPath::fp16_sm90));
    CHECK(path_supports_head_dim(path, 96) == (path == PvPath::fp16_sm90));
    CHECK_FALSE(path_supports_head_dim(path, 80));
  }
  // Above 128 every GPU gets a 16-bit P·V path, at any query length.
  for (int rows : {0, 1, kHopperPv16MaxQueryLen + 1}) {
    CHECK(pv_path_for(9, 0, true, rows, 256) == PvPath::fp16_sm90);
    CHECK(pv_path_for(9, 0, true, rows, 192) == PvPath::fp16_sm90);
    CHECK(pv_path_for(8, 9, true, rows, 256) == PvPath::fp16);
    CHECK(pv_path_for(12, 0, false, rows, 192) == PvPath::fp16);
    CHECK(pv_path_for(9, 0, false, rows, 256) == PvPath::fp16);
  }
  CHECK(pv_path_for(8, 9, true, 1, 128) == PvPath::fp8);
}

TEST_CASE("accumulations per path: FP16 block sums on the mma.sync paths only", "[api]") {
  for (PvPath path : {PvPath::fp16, PvPath::fp8, PvPath::fp8_sm90, PvPath::fp16_sm90}) {
    CHECK(accumulation_name(path, PvAccum::fp32) != nullptr);  // every path's default
    CHECK((accumulation_name(path, PvAccum::fp16_block) != nullptr) == !is_sm90_path(path));
    for (int d : kSupportedHeadDims) {  // the default at every head dim of the path
      CHECK(accumulation_supports_head_dim(path, PvAccum::fp32, d) ==
            path_supports_head_dim(path, d));
    }
  }
  CHECK(std::string(accumulation_name(PvPath::fp8, PvAccum::fp16_block)) == "fp32+fp16");
  CHECK(std::string(accumulation_name(PvPath::fp8, PvAccum::fp32)) == "fp32+fp32");
  CHECK(std::string(accumulation_name(PvPath::fp16, PvAccum::fp32)) == "fp32");
  CHECK(std::string(accumulation_name(PvPath::fp16, PvAccum::fp16_block)) == "fp16+fp32");
  // The 16-bit path's FP16 block sums stop at d=128, as upstream's 16-bit kernels do.
  CHECK(accumulation_supports_head_dim(PvPath::fp16, PvAccum::fp16_block, 128));
  CHECK_FALSE(accumulation_supports_head_dim(PvPath::fp16, PvAccum::fp16_block, 256));
  CHECK(accumulation_supports_head_dim(PvPath::fp8, PvAccum::fp16_block, 64));
  CHECK(accumulation_name(PvPath::fp8, static_cast<PvAccum>(kAccumulationCount)) == nullptr);
  // A 64-key block of P ≤ 448 times V ≤ fp8_v_max stays inside FP16 (65,504).
  CHECK(64.0 * 448.0 * fp8_v_max(PvAccum::fp16_block) <= 65504.0);
  CHECK(fp8_v_max(PvAccum::fp32) == 448.f);
}

TEST_CASE("FP16 block sums by default where GeForce parts double the mma's rate", "[api]") {
  for (int cc : {80, 86, 89, 90, 100, 103, 120, 121}) {
    for (bool sm90a : {false, true}) {
      for (int head_dim : {128, 256}) {  // 256: the 16-bit path on sm89 and later too
        const PvPath path = pv_path_for(cc / 10, cc % 10, sm90a, 4096, head_dim);
        const bool mma = path == PvPath::fp8 || path == PvPath::fp16;
        const bool geforce = cc == 86 || cc == 89 || cc == 120 || cc == 121;
        const PvAccum expected =
            mma && geforce && head_dim <= 128 ? PvAccum::fp16_block : PvAccum::fp32;
        const PvAccum planned = pv_accum_for(path, cc / 10, cc % 10, head_dim);
        CHECK(planned == expected);
        CHECK(accumulation_name(path, planned) != nullptr);
        CHECK(accumulation_supports_head_dim(path, planned, head_dim));
      }
    }
  }
}

}  // namespace
}  // namespace sageattn
