// attention_launch.h: the kernels' arguments for a call (attention_args) and batch_slice, which
// lets a batch larger than the grid's z limit run in several launches: every workspace array's
// slices must step through exactly its region of layout_workspace (workspace.h), and the
// caller's tensors by their batch strides.
#include "attention_launch.h"

#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

namespace sageattn::detail {
namespace {

const char* bytes(const void* p) {
  return static_cast<const char*>(p);
}

// One workspace array as batch_slice sees it: its slices at batches 0 .. B must walk its
// region [begin, end) in equal steps and end within its alignment padding (256 bytes).
void check_walks_region(const char* name, const void* slice0, const void* slice_last,
                        const void* slice_end, const void* begin, const void* end, int batch) {
  INFO(name);
  CHECK(slice0 == begin);
  const std::ptrdiff_t step = (bytes(slice_end) - bytes(slice0)) / batch;
  CHECK(bytes(slice_end) - bytes(slice_last) == step);
  CHECK(bytes(slice_end) <= bytes(end));
  CHECK(bytes(end) - bytes(slice_end) < 256);
}

// A call of 5 batches, 6 query heads on 3 KV heads, 100 queries, 300 keys (no tensors yet).
Params call_shape(PvPath path, int head_dim) {
  Params p;
  p.batch = 5;
  p.heads_q = 6;
  p.heads_kv = 3;
  p.qo_len = 100;
  p.kv_len = 300;
  p.head_dim = head_dim;
  p.pv_path = path;
  p.q_granularity = Granularity::per_warp;
  p.k_granularity = Granularity::per_block;
  return p;
}

TEST_CASE("a batch slice moves every array to its first batch", "[launch]") {
  for (PvPath path : {PvPath::fp16, PvPath::fp8, PvPath::fp8_sm90, PvPath::fp16_sm90}) {
    for (int d : {64, 128}) {
      Params p = call_shape(path, d);
      std::vector<unsigned char> memory(layout_workspace(p, nullptr).total);
      const Workspace w = layout_workspace(p, memory.data());
      const bool fp8_v = uses_fp8_v(path);  // else V's region is empty and unused
      // The caller's tensors: NHD views into wider buffers, batch strides of their own.
      std::vector<std::uint16_t> q(1), kv(1), o(1);
      std::vector<float> lse(1);
      p.q = {q.data(), 7000, d, 6 * d};
      p.k = p.v = {kv.data(), 9000, d, 3 * d};
      p.o = {o.data(), 8000, d, 6 * d};
      p.lse = lse.data();
      p.smooth_k = true;
      const AttentionArgs a = attention_args(p, w, 0.125f);
      INFO("path " << static_cast<int>(path) << ", d " << d);

      const AttentionArgs first = batch_slice(a, 0, d);
      const AttentionArgs last = batch_slice(a, p.batch - 1, d);
      const AttentionArgs end = batch_slice(a, p.batch, d);
      // (The sharp-tile worklist's entries follow V: they are the whole call's, never sliced.)
      const void* end_of_all = w.sharp_tiles;
      check_walks_region("k", first.k, last.k, end.k, w.k, w.k_scale, p.batch);
      check_walks_region("k_scale", first.k_scale, last.k_scale, end.k_scale, w.k_scale,
                         fp8_v ? static_cast<const void*>(w.v) : end_of_all, p.batch);
      check_walks_region("k_sum", first.k_sum, last.k_sum, end.k_sum, w.k_sum, w.v_amax, p.batch);
      check_walks_region("v_amax", first.v_amax, last.v_amax, end.v_amax, w.v_amax, w.job_counters,
                         p.batch);
      if (fp8_v) {
        check_walks_region("v_fp8", first.v_fp8, last.v_fp8, end.v_fp8, w.v, end_of_all, p.batch);
      } else {
        CHECK(end.v_fp8 == nullptr);  // absent arrays stay absent
      }
      // The caller's tensors: by their batch strides, in 16-bit elements; the LSE [B, Hq, lq].
      CHECK(bytes(last.q16) - bytes(q.data()) == 2 * 4 * 7000);
      CHECK(bytes(last.v) - bytes(kv.data()) == 2 * 4 * 9000);
      CHECK(bytes(last.o) - bytes(o.data()) == 2 * 4 * 8000);
      CHECK(last.lse - lse.data() == 4 * p.heads_q * p.qo_len);
      CHECK(bytes(last.k16) - bytes(kv.data()) == 2 * 4 * 9000);
      // The sharp-tile worklist names batches of the whole call: the slice's first is batch0.
      CHECK(last.batch0 == 4);
      CHECK(batch_slice(batch_slice(a, 2, d), 1, d).batch0 == 3);
      CHECK((last.sharp_count == a.sharp_count && last.sharp_tiles == a.sharp_tiles));
      // Nothing else changes.
      CHECK(last.unit_rows == a.unit_rows);
      CHECK(last.seq0 == 0);
      CHECK(last.heads_q == a.heads_q);
    }
  }
}

TEST_CASE("a slice of a call without an LSE or K's sums has none either", "[launch]") {
  const Params p = call_shape(PvPath::fp16_sm90, 64);
  std::vector<unsigned char> memory(layout_workspace(p, nullptr).total);
  const AttentionArgs a = attention_args(p, layout_workspace(p, memory.data()), 0.125f);
  const AttentionArgs s = batch_slice(a, 3, 64);
  CHECK(s.lse == nullptr);
  CHECK(s.k_sum == nullptr);  // only the LSE with smoothing reads K's sums
  CHECK(s.v_fp8 == nullptr);  // 16-bit P·V: no FP8 V
}

TEST_CASE("a varlen call's slices move no pointer: the kernels count sequences from seq0",
          "[launch]") {
  // The sequences' rows come from their offsets and the workspace's units are KV heads, so a
  // slice of sequences reads everything where the whole call would.
  Params p = call_shape(PvPath::fp8_sm90, 128);
  static const std::int32_t offsets[6] = {};
  p.varlen = {offsets, offsets, 500, 1500};
  std::vector<unsigned char> memory(layout_workspace(p, nullptr).total);
  std::vector<std::uint16_t> q(1), kv(1), o(1);
  std::vector<float> lse(1);
  p.q = {q.data(), 0, 128, 6 * 128};
  p.k = p.v = {kv.data(), 0, 128, 3 * 128};
  p.o = {o.data(), 0, 128, 6 * 128};
  p.lse = lse.data();
  p.smooth_k = true;
  const AttentionArgs a = attention_args(p, layout_workspace(p, memory.data()), 0.125f);
  CHECK(a.q_sb == 0);  // packed rows: no batch stride
  CHECK(a.unit_batch_stride == 0);
  const AttentionArgs s = batch_slice(batch_slice(a, 2, 128), 1, 128);
  CHECK(s.seq0 == 3);
  CHECK((s.k == a.k && s.k_scale == a.k_scale && s.v_fp8 == a.v_fp8 && s.v_amax == a.v_amax &&
         s.k_sum == a.k_sum && s.q16 == a.q16 && s.o == a.o && s.v == a.v && s.lse == a.lse &&
         s.cu_q == a.cu_q && s.cu_k == a.cu_k && s.k16 == a.k16 && s.batch0 == 0));
}

}  // namespace
}  // namespace sageattn::detail
