// attention_launch.h's batch_slice, which lets a batch larger than the grid's z limit run in
// several launches: every workspace array's slices must step through exactly its region of
// layout_workspace (workspace.h), and the caller's tensors by their batch strides.
#include "attention_launch.h"

#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "workspace.h"

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

TEST_CASE("a batch slice moves every array to its first batch", "[launch]") {
  for (PvPath path : {PvPath::fp16, PvPath::fp8, PvPath::fp8_sm90, PvPath::fp16_sm90}) {
    for (int d : {64, 128}) {
      Params p;
      p.batch = 5;
      p.heads_q = 6;
      p.heads_kv = 3;
      p.qo_len = 100;
      p.kv_len = 300;
      p.head_dim = d;
      p.pv_path = path;
      p.q_granularity = Granularity::per_warp;
      p.k_granularity = Granularity::per_block;
      std::vector<unsigned char> memory(layout_workspace(p, nullptr).total);
      const Workspace w = layout_workspace(p, memory.data());
      const bool fp8_v = uses_fp8_v(path);  // else V's region is empty and unused
      AttentionArgs a{};
      a.k = w.k;
      a.k_scale = w.k_scale;
      a.k_sum = w.k_sum;
      a.v_fp8 = fp8_v ? w.v : nullptr;
      a.v_amax = w.v_amax;
      a.heads_q = p.heads_q;
      a.heads_kv = p.heads_kv;
      a.qo_len = p.qo_len;
      a.kv_len = p.kv_len;
      a.q_pad = w.q_pad;
      a.kv_pad = w.kv_pad;
      a.q_rows = w.q_rows;
      a.k_rows = w.k_rows;
      // The caller's tensors, NHD with padded rows: their own strides, not the shapes'.
      std::vector<std::uint16_t> q(1), kv(1), o(1);
      std::vector<float> lse(1);
      a.q16 = q.data();
      a.q_sb = 7000;
      a.v = kv.data();
      a.v_sb = 9000;
      a.o = o.data();
      a.o_sb = 8000;
      a.lse = lse.data();
      INFO("path " << static_cast<int>(path) << ", d " << d);

      const AttentionArgs first = batch_slice(a, 0, d);
      const AttentionArgs last = batch_slice(a, p.batch - 1, d);
      const AttentionArgs end = batch_slice(a, p.batch, d);
      const void* end_of_all = memory.data() + memory.size();
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
      // Nothing else changes.
      CHECK(last.kv_pad == a.kv_pad);
      CHECK(last.heads_q == a.heads_q);
    }
  }
}

TEST_CASE("a slice of a call without an LSE or K's sums has none either", "[launch]") {
  AttentionArgs a{};
  a.heads_q = 2;
  a.heads_kv = 1;
  a.qo_len = 10;
  a.kv_pad = 128;
  a.k_rows = 64;
  const AttentionArgs s = batch_slice(a, 3, 64);
  CHECK(s.lse == nullptr);
  CHECK(s.k_sum == nullptr);
  CHECK(s.v_fp8 == nullptr);
}

}  // namespace
}  // namespace sageattn::detail
