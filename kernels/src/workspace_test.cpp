// workspace.h: the Hopper kernel's choice of consumer warpgroups and key block (the launcher
// and the host reference must agree on it, since the key block sets how P is rounded), and the
// workspace's layout per path.
#include "workspace.h"

#include <vector>

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

TEST_CASE("the Hopper paths' workspace holds no INT8 copy of Q", "[workspace]") {
  // Their attention kernel quantizes Q from the caller's tensor, so the quantization launch
  // skips it and the workspace has no room for it; the mma.sync paths read Q's INT8 copy.
  const std::size_t bq = 2 * 8, q_pad = 1024, d = 128;
  const std::size_t q_bytes = bq * q_pad * d;  // INT8 Q; its scales and q_km come on top
  for (PvPath mma : {PvPath::fp16, PvPath::fp8}) {
    const PvPath sm90 = mma == PvPath::fp16 ? PvPath::fp16_sm90 : PvPath::fp8_sm90;
    const Workspace with_q = layout_workspace(shape(mma), nullptr);
    const Workspace without_q = layout_workspace(shape(sm90), nullptr);
    CHECK_FALSE(quantizes_q_in_attention(mma));
    CHECK(quantizes_q_in_attention(sm90));
    CHECK(with_q.total - without_q.total >= q_bytes);
    // K (and V on the FP8 paths) are laid out alike: only Q's part differs.
    CHECK(with_q.total - without_q.total < q_bytes + bq * q_pad * 2 * sizeof(float) + 3 * 256);
    CHECK(without_q.q_pad == with_q.q_pad);  // the kernel's grid still spans the padded rows
  }
  // Placed in a buffer, the empty Q arrays take no bytes: K starts where Q would have.
  const Params p = shape(PvPath::fp16_sm90, 17, 150);
  std::vector<unsigned char> buffer(layout_workspace(p, nullptr).total);
  const Workspace w = layout_workspace(p, buffer.data());
  CHECK(reinterpret_cast<unsigned char*>(w.k) == reinterpret_cast<unsigned char*>(w.q));
  CHECK(w.total == buffer.size());
}

}  // namespace
}  // namespace sageattn::detail
