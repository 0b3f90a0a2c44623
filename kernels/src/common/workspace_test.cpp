// tile_policy.h: the Hopper kernel's choice of consumer warpgroups and key block (the launcher
// and the host reference must agree on it, since the key block sets how P is rounded); and
// workspace.h: the workspace's layout per path.
#include "workspace.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attention_launch.h"

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
  CHECK(sm90_key_block(64, false, 4) == 64);
  CHECK(sm90_key_block(128, false, 3) == 64);
  CHECK(sm90_key_block(128, true, 2) == 128);
  CHECK(sm90_key_block(128, false, 2) == 128);
  CHECK(sm90_key_block(64, true, 3) == 128);
  CHECK(sm90_key_block(64, false, 2) == 128);
  // Shapes the manifest has no row for.
  CHECK(sm90_key_block(128, true, 3) == 0);
  CHECK(sm90_key_block(64, true, 4) == 0);
}

TEST_CASE("every head dim a path takes has its shape rows", "[workspace]") {
  for (int i = 0; i < kPathCount; ++i) {
    const auto path = static_cast<PvPath>(i);
    for (int d : kSupportedHeadDims) {
      if (!path_supports_head_dim(path, d)) continue;
      CAPTURE(path_name(path), d);
      CHECK(head_dim_row(d) >= 0);
      if (is_sm90_path(path)) {
        CHECK(sm90_has_tile(d, uses_fp8_v(path), 2));
      } else {
        CHECK(mma_tile_row(path, d) >= 0);
      }
    }
  }
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
  // The attention kernels quantize Q as they read it (quantize/q_int8.cuh): no INT8 copy of Q, so
  // the query length and the query heads change nothing but q_pad, the kernels' grid, and the
  // sharp-tile guard's worklist (32 bytes per 64 query rows and head; none without the guard).
  for (PvPath path : {PvPath::fp16, PvPath::fp8, PvPath::fp8_sm90, PvPath::fp16_sm90}) {
    Params few = shape(path, 17);
    Params many = shape(path, 32768);
    many.heads_q = 64;
    few.sharp_threshold = many.sharp_threshold = 0.f;
    const Workspace short_q = layout_workspace(few, nullptr);
    const Workspace long_q = layout_workspace(many, nullptr);
    CHECK(short_q.total == long_q.total);
    CHECK(short_q.sharp_count == nullptr);
    many.sharp_threshold = kDefaultSharpThreshold;
    const Workspace guarded = layout_workspace(many, nullptr);
    CHECK(guarded.sharp_capacity == 2 * 64 * 32768 / 64);  // batch × heads × tiles
    CHECK(guarded.total - long_q.total ==
          256 + round_up(guarded.sharp_capacity * static_cast<int>(sizeof(SharpTile)), 256));
    CHECK(short_q.q_pad == 64);
    CHECK(long_q.q_pad == 32768);
  }
  // K's INT8 copy is the bulk: kv_pad × D bytes per KV head (V's e4m3 copy as much again).
  const std::size_t k_bytes = 2 * 2 * 4160 * 128;  // batch × KV heads × kv_pad × D
  CHECK(layout_workspace(shape(PvPath::fp16), nullptr).total > k_bytes);
  CHECK(layout_workspace(shape(PvPath::fp8), nullptr).total > 2 * k_bytes);
  // Placed in a buffer: the statistics first, contiguous (zeroed with one memset), the guard's
  // count among them, then K, and the worklist's entries last.
  const Params p = shape(PvPath::fp8_sm90, 17, 150);
  std::vector<unsigned char> buffer(layout_workspace(p, nullptr).total);
  const Workspace w = layout_workspace(p, buffer.data());
  const auto at = [&](const void* a) {
    return static_cast<const unsigned char*>(a) - buffer.data();
  };
  CHECK(at(w.k_sum) == 0);
  CHECK(at(w.sharp_count) + 2 * sizeof(std::uint32_t) <= w.stats_bytes);
  CHECK(at(w.k) == static_cast<std::ptrdiff_t>(w.stats_bytes));
  CHECK(w.sharp_capacity == 2 * 8);  // 17 rows: one tile per (batch, query head)
  CHECK(at(w.sharp_tiles) + w.sharp_capacity * sizeof(SharpTile) <= w.total);
  CHECK(at(w.sharp_tiles) > at(w.k_scale));
  CHECK(w.total == buffer.size());
}

TEST_CASE("the sharp-tile worklist has room for every tile, dense or varlen", "[workspace]") {
  // Dense: ceil(qo_len / 64) tiles per (batch, query head).
  CHECK(sharp_tile_capacity(shape(PvPath::fp16, 64)) == 2 * 8 * 1);
  CHECK(sharp_tile_capacity(shape(PvPath::fp16, 65)) == 2 * 8 * 2);
  // Varlen: a sequence of n rows has ceil(n / 64) ≤ n / 64 + 1 tiles, so total_q / 64 + batch per
  // query head covers any split of total_q rows among the sequences.
  Params p = shape(PvPath::fp16_sm90);
  static const std::int32_t device_offsets[2] = {};
  p.batch = 5;
  p.varlen = {device_offsets, device_offsets, 130, 400};
  CHECK(sharp_tile_capacity(p) == 8 * (130 / 64 + 5));
  for (const std::vector<int>& lens : {std::vector<int>{1, 1, 1, 1, 126},
                                       {65, 65, 0, 0, 0},
                                       {26, 26, 26, 26, 26},
                                       {130, 0, 0, 0, 0}}) {
    int tiles = 0;
    for (int n : lens)
      tiles += (n + 63) / 64;
    CHECK(8 * tiles <= sharp_tile_capacity(p));
  }
  // Thresholds that turn the guard off, and the ones that do not. (The layout is taken at a
  // made-up base: with none, every pointer of it is null, kept or not.)
  alignas(256) static char base[1];
  auto keeps_worklist = [&](const Params& p) {
    const Workspace w = layout_workspace(p, base);
    CHECK((w.sharp_count != nullptr) == (w.sharp_tiles != nullptr));
    CHECK((w.sharp_count != nullptr) == (w.sharp_capacity > 0));
    return w.sharp_count != nullptr;
  };
  Params off = shape(PvPath::fp16);
  for (float t : {0.f, std::numeric_limits<float>::infinity()}) {
    off.sharp_threshold = t;
    CHECK_FALSE(off.guards_sharp_tiles());
    CHECK_FALSE(keeps_worklist(off));
  }
  off.sharp_threshold = 1e-3f;
  CHECK(off.guards_sharp_tiles());
  CHECK(keeps_worklist(off));
  // FP16 block sums of 16-bit P·V keep the worklist with the guard off: their overflowed tiles
  // are computed again there. The FP8 path's are bounded by V's scale and do not.
  for (const PvPath path : {PvPath::fp16, PvPath::fp8}) {
    Params blocks = shape(path);
    blocks.pv_accum = PvAccum::fp16_block;
    blocks.sharp_threshold = 0.f;
    const bool keeps = path == PvPath::fp16;
    CHECK(accumulation_may_overflow(path, PvAccum::fp16_block) == keeps);
    CHECK(blocks.redoes_tiles() == keeps);
    CHECK(keeps_worklist(blocks) == keeps);
    CHECK(attention_args(blocks, layout_workspace(blocks, nullptr), 1.f).sharp_limit ==
          std::numeric_limits<float>::infinity());
  }
}

// A varlen call's workspace (sequence.h): every sequence's region, its keys rounded up to whole
// 128-row tiles, starts 64-aligned, lies inside the unit and overlaps no other, whatever the
// lengths (random batches with many empty and short sequences, and the extremes).
TEST_CASE("varlen sequences get disjoint workspace regions that hold whole key tiles",
          "[workspace]") {
  std::uint64_t state = 12345;
  auto next = [&](int below) {  // xorshift: reproducible on every platform
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<int>(state % static_cast<std::uint64_t>(below));
  };
  for (int trial = 0; trial < 2000; ++trial) {
    const int batch = 1 + next(40);
    std::vector<int> cu{0};
    for (int b = 0; b < batch; ++b) {
      const int kind = next(4);  // empty, tiny, around a tile, long
      const int len = kind == 0 ? 0 : kind == 1 ? next(8) : kind == 2 ? 120 + next(20) : next(5000);
      cu.push_back(cu.back() + len);
    }
    const std::int64_t rows = varlen_workspace_rows(cu.back(), batch);
    std::int64_t previous_end = 0;
    for (int b = 0; b < batch; ++b) {
      const SeqSpan span = sequence_span<true>(cu.data(), b, cu.back(), 1 << 30);
      REQUIRE_FALSE(span.invalid);
      const std::int64_t base = varlen_row_base(span.start, b);
      const std::int64_t end = base + varlen_region_rows(span.len);
      CHECK(base % kVarlenRowAlign == 0);
      CHECK(base >= previous_end);
      CHECK(end <= rows);
      previous_end = end;
    }
  }
}

TEST_CASE("varlen offsets are clamped into the tensor and flagged when they do not fit",
          "[workspace]") {
  const int cu[] = {0, 5, 3, 40, 1000};  // decreasing at 1, past a total of 100 at 3
  const SeqSpan ok = sequence_span<true>(cu, 0, 100, 64);
  CHECK((ok.start == 0 && ok.len == 5 && !ok.invalid));
  const SeqSpan decreasing = sequence_span<true>(cu, 1, 100, 64);
  CHECK((decreasing.start == 5 && decreasing.len == 0 && decreasing.invalid));
  const SeqSpan too_long = sequence_span<true>(cu, 2, 100, 16);  // 37 rows, bound 16
  CHECK((too_long.start == 3 && too_long.len == 16 && too_long.invalid));
  const SeqSpan outside = sequence_span<true>(cu, 3, 100, 1000);
  CHECK((outside.start == 40 && outside.len == 60 && outside.invalid));
  // A dense call's sequence is its batch's whole length, whatever the pointer.
  const SeqSpan dense = sequence_span<false>(nullptr, 7, 0, 300);
  CHECK((dense.start == 0 && dense.len == 300 && !dense.invalid));
}

Params varlen_shape(PvPath path, int batch, int total_k) {
  Params p = shape(path, 500, 4097);                 // qo_len and kv_len: the longest sequences
  static const std::int32_t device_offsets[2] = {};  // the host never reads them
  p.batch = batch;
  p.varlen = {device_offsets, device_offsets, 9000, total_k};
  return p;
}

TEST_CASE("a varlen workspace keeps one unit per KV head, sized by the total keys", "[workspace]") {
  for (PvPath path : {PvPath::fp16_sm90, PvPath::fp8}) {
    const Params p = varlen_shape(path, 64, 250000);
    const Workspace w = layout_workspace(p, nullptr);
    CHECK(w.unit_batch_stride == 0);
    CHECK(w.unit_rows == varlen_workspace_rows(250000, 64));
    CHECK(w.unit_rows == 250048 + 192 * 64);
    CHECK(w.unit_scales == w.unit_rows / kBlockM);  // K per block
    // K's copy is heads_kv × unit_rows × D: the total keys, not batch × the longest.
    const std::size_t k_bytes = 2 * static_cast<std::size_t>(w.unit_rows) * 128;
    CHECK(w.total >= k_bytes * (uses_fp8_v(path) ? 2 : 1));
    CHECK(w.total < k_bytes * (uses_fp8_v(path) ? 2 : 1) + (1 << 20));
  }
}

TEST_CASE("varlen calls are checked for what the host can see", "[workspace]") {
  Params p = varlen_shape(PvPath::fp16, 4, 1000);
  CHECK(check_varlen(p).ok);
  Params half = p;
  half.varlen.cu_seqlens_k = nullptr;
  CHECK(check_varlen(half).message ==
        "sageattn: a varlen call needs both cu_seqlens_q and cu_seqlens_k (or neither)");
  Params empty = p;
  empty.varlen.total_k = 0;
  CHECK(check_varlen(empty).message ==
        "sageattn: a varlen call needs at least one query row and one key row (got total_q 9000, "
        "total_k 0)");
  Params huge = p;
  huge.batch = 12000000;  // 192 rows each: past 2^31 workspace rows
  CHECK(check_varlen(huge).message.find("split the batch into several calls") != std::string::npos);
  Params misaligned = p;
  misaligned.varlen.cu_seqlens_q = reinterpret_cast<const std::int32_t*>(
      reinterpret_cast<const char*>(p.varlen.cu_seqlens_q) + 2);
  CHECK(check_varlen(misaligned).message ==
        "sageattn: cu_seqlens must be int32 arrays (4-byte aligned)");
  CHECK(check_varlen(shape(PvPath::fp16)).ok);  // dense calls have nothing to check here
}

}  // namespace
}  // namespace sageattn::detail
