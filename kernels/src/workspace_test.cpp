// tile_policy.h: the Hopper kernel's choice of consumer warpgroups and key block (the launcher
// and the host reference must agree on it, since the key block sets how P is rounded); and
// workspace.h: the workspace's layout per path.
#include "workspace.h"

#include <vector>

#include <catch2/catch.hpp>

namespace sageattn::detail {
namespace {

TEST_CASE("the Hopper kernel runs three or four consumer warpgroups where they fit and pay",
          "[workspace]") {
  CHECK(sm90_consumer_warpgroups(64, PvPath::fp8_sm90, false, 1) == 3);
  CHECK(sm90_consumer_warpgroups(64, PvPath::fp8_sm90, false, 32768) == 3);
  // Short causal calls keep two: 192-row tiles lose more to the diagonal than they gain.
  CHECK(sm90_consumer_warpgroups(64, PvPath::fp8_sm90, true, kThreeConsumersMinCausalRows - 1) ==
        2);
  CHECK(sm90_consumer_warpgroups(64, PvPath::fp8_sm90, true, kThreeConsumersMinCausalRows) == 3);
  // d=64 with 16-bit P·V: four on short calls, causal or not, three beyond.
  for (bool causal : {false, true}) {
    CHECK(sm90_consumer_warpgroups(64, PvPath::fp16_sm90, causal, 1) == 4);
    CHECK(sm90_consumer_warpgroups(64, PvPath::fp16_sm90, causal, kFourConsumersMaxRows) == 4);
    CHECK(sm90_consumer_warpgroups(64, PvPath::fp16_sm90, causal, kFourConsumersMaxRows + 1) == 3);
  }
  CHECK(sm90_consumer_warpgroups(128, PvPath::fp16_sm90, false, 17) == 3);
  CHECK(sm90_consumer_warpgroups(128, PvPath::fp16_sm90, true, 1000) == 2);
  CHECK(sm90_consumer_warpgroups(128, PvPath::fp16_sm90, true, 4097) == 3);
  // FP8 P·V at d=128: three fit only with its second-level accumulator in parts, which was
  // slower (kernels/NOTES.md, sm90-o-prime-in-two-parts).
  CHECK(sm90_consumer_warpgroups(128, PvPath::fp8_sm90, false, 32768) == 2);
}

TEST_CASE("the key block is 64 only for three consumer warpgroups at d=128 and four at d=64",
          "[workspace]") {
  CHECK(sm90_key_block(64, 4) == 64);
  CHECK(sm90_key_block(128, 3) == 64);
  CHECK(sm90_key_block(128, 2) == 128);
  CHECK(sm90_key_block(64, 3) == 128);
  CHECK(sm90_key_block(64, 2) == 128);
}

Params shape(PvPath path, int qo_len = 1000, int kv_len = 4097) {
  Params p;
  p.batch = 2;
  p.heads_q = 8;
  p.heads_kv = 2;
  p.qo_len = qo_len;
  p.kv_len = kv_len;
  p.head_dim = 128;
  p.pv_path = path;
  return p;
}

TEST_CASE("the workspace holds K and V only: its size does not depend on Q", "[workspace]") {
  // The attention kernels quantize Q as they read it (quantize_q.cuh): no INT8 copy of Q, so
  // the query length and the query heads change nothing but q_pad, the kernels' grid.
  for (PvPath path : {PvPath::fp16, PvPath::fp8, PvPath::fp8_sm90, PvPath::fp16_sm90}) {
    const Workspace short_q = layout_workspace(shape(path, 17), nullptr);
    Params many = shape(path, 32768);
    many.heads_q = 64;
    const Workspace long_q = layout_workspace(many, nullptr);
    CHECK(short_q.total == long_q.total);
    CHECK(short_q.q_pad == 64);
    CHECK(long_q.q_pad == 32768);
  }
  // K's INT8 copy is the bulk: kv_pad × D bytes per KV head (V's e4m3 copy as much again).
  const std::size_t k_bytes = 2 * 2 * 4160 * 128;  // batch × KV heads × kv_pad × D
  CHECK(layout_workspace(shape(PvPath::fp16), nullptr).total > k_bytes);
  CHECK(layout_workspace(shape(PvPath::fp8), nullptr).total > 2 * k_bytes);
  // Placed in a buffer: the statistics first, contiguous (zeroed with one memset), then K.
  const Params p = shape(PvPath::fp8_sm90, 17, 150);
  std::vector<unsigned char> buffer(layout_workspace(p, nullptr).total);
  const Workspace w = layout_workspace(p, buffer.data());
  CHECK(reinterpret_cast<unsigned char*>(w.k_sum) == buffer.data());
  CHECK(reinterpret_cast<unsigned char*>(w.k) == buffer.data() + w.stats_bytes);
  CHECK(w.total == buffer.size());
}

}  // namespace
}  // namespace sageattn::detail
