#include "queue.h"

#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

namespace sageattn::detail {
namespace {

struct Seen {
  int first_quant = -1;  // ticket of its first quantizing job
  int quant_before = 0;  // quantizing jobs (of any unit) between the two
};

// Every ticket names a distinct job, every job has a ticket, and each unit's statistics come
// `gap` quantizing jobs before its own (fewer only at the front of the queue).
void check_queue(int units, int stat_jobs, int quant_jobs, int gap) {
  CAPTURE(units, stat_jobs, quant_jobs, gap);
  const QueueShape q = make_queue_shape(units, stat_jobs, quant_jobs, gap);
  const int per_unit = stat_jobs + quant_jobs;
  std::vector<int> hits(static_cast<std::size_t>(units) * per_unit, 0);
  std::vector<Seen> seen(units);
  int quant_so_far = 0;
  for (int t = 0; t < units * per_unit; ++t) {
    const JobRef r = decode_ticket(q, t);
    REQUIRE(r.unit >= 0);
    REQUIRE(r.unit < units);
    REQUIRE(r.job >= 0);
    REQUIRE(r.job < per_unit);
    ++hits[static_cast<std::size_t>(r.unit) * per_unit + r.job];
    Seen& s = seen[r.unit];
    if (r.job < stat_jobs) {
      REQUIRE(s.first_quant == -1);  // statistics before the unit's quantizing jobs
      s.quant_before = quant_so_far;
    } else {
      if (s.first_quant == -1) {
        s.first_quant = t;
        if (stat_jobs > 0) {
          const int between = quant_so_far - s.quant_before;
          CHECK(between == std::min(gap, r.unit * quant_jobs));
        }
      }
      ++quant_so_far;
    }
  }
  CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
}

TEST_CASE("quantization queue: a bijection with statistics ahead by the gap", "[quantize]") {
  for (int units : {1, 2, 3, 7, 64})
    for (int stat_jobs : {0, 1, 4, 128})
      for (int quant_jobs : {1, 3, 20, 768})
        for (int gap : {0, 1, 5, 264, 1056, 100000})
          check_queue(units, stat_jobs, quant_jobs, gap);
}

TEST_CASE("quantization queue: the front holds the statistics of the first units", "[quantize]") {
  const QueueShape q = make_queue_shape(10, 4, 20, 45);  // units 0, 1, 2 have u·20 <= 45
  CHECK(q.early == 3);
  for (int t = 0; t < 12; ++t) {
    CHECK(decode_ticket(q, t).unit == t / 4);
    CHECK(decode_ticket(q, t).job == t % 4);
  }
  CHECK(decode_ticket(q, 12).unit == 0);  // then unit 0's first quantizing job
  CHECK(decode_ticket(q, 12).job == 4);
}

// The fused queue's protocol, run on the host: each CTA, in round r, publishes its slice (if it
// has one), then waits until the unit of its round r - 1 slice has all its slices published and
// quantizes it. CTAs advance in an adversarial order (the lowest-numbered CTA that can move
// first, so some run far ahead). Returns whether every CTA finished; checks that each slice is
// taken exactly once and quantized only after its unit is complete.
bool run_fused_protocol(int units, int slices_per_unit, int ctas) {
  CAPTURE(units, slices_per_unit, ctas);
  const int slices = units * slices_per_unit;
  std::vector<int> published(units, 0), taken(slices, 0);
  std::vector<int> round(ctas, 0);
  std::vector<bool> published_this_round(ctas, false), done(ctas, false);
  auto slice_number = [&](int cta, int r) { return r * ctas + cta; };
  for (bool moved = true; moved;) {
    moved = false;
    for (int c = 0; c < ctas; ++c) {
      if (done[c]) continue;
      const int r = round[c];
      const bool has_this = slice_number(c, r) < slices;
      if (!has_this && r == 0) {
        done[c] = true;
        moved = true;
        break;
      }
      if (has_this && !published_this_round[c]) {
        const FusedSlice f = fused_slice(slices_per_unit, ctas, c, r);
        REQUIRE(f.unit * slices_per_unit + f.job == slice_number(c, r));
        ++published[f.unit];
        ++taken[slice_number(c, r)];
        published_this_round[c] = true;
      }
      if (r > 0) {
        const FusedSlice prev = fused_slice(slices_per_unit, ctas, c, r - 1);
        if (published[prev.unit] < slices_per_unit) continue;  // waits
      }
      published_this_round[c] = false;
      ++round[c];
      done[c] = !has_this;
      moved = true;
      break;
    }
  }
  CHECK(std::all_of(taken.begin(), taken.end(), [](int t) { return t <= 1; }));
  const bool finished = std::all_of(done.begin(), done.end(), [](bool d) { return d; });
  if (finished) CHECK(std::all_of(taken.begin(), taken.end(), [](int t) { return t == 1; }));
  return finished;
}

TEST_CASE("fused quantization queue: no deadlock while a unit's slices fit the grid",
          "[quantize]") {
  for (int ctas : {1, 2, 3, 8, 33})
    for (int slices_per_unit : {1, 2, 3, 7, 8, 16, 33})
      for (int units : {1, 2, 5, 12}) {
        if (!fused_queue_can_run(units, slices_per_unit, ctas)) continue;
        CHECK(run_fused_protocol(units, slices_per_unit, std::min(ctas, units * slices_per_unit)));
      }
}

TEST_CASE("fused quantization queue: the host's condition is needed", "[quantize]") {
  // One unit of five slices on two CTAs spans three rounds: CTA 0 publishes slice 4 in round 2,
  // after its round-1 wait on the unit, which needs slice 4.
  CHECK_FALSE(fused_queue_can_run(1, 5, 2));
  CHECK_FALSE(run_fused_protocol(1, 5, 2));
  CHECK(fused_queue_can_run(1, 2, 2));
  CHECK_FALSE(fused_queue_can_run(0x40000000, 4, 8));  // slice numbers past an int
}

TEST_CASE("fused quantization queue: K and V slices deal as separate barrier groups",
          "[quantize]") {
  // 3 units, 5 slices of K and 5 of V each, on 4 CTAs: every (unit, K or V, job) dealt once, a
  // unit's K slices before its V slices, and each group's slices in consecutive numbers (what
  // the deadlock argument needs of a group; the protocol test above covers the waits).
  const int units = 3, kv_jobs = 5, groups = 2, ctas = 4;
  std::vector<int> dealt(static_cast<std::size_t>(units) * groups * kv_jobs, 0);
  for (int n = 0; n < units * groups * kv_jobs; ++n) {
    const FusedJob f = fused_job(kv_jobs, groups, ctas, n % ctas, n / ctas);
    REQUIRE(f.unit < units);
    REQUIRE(f.job < kv_jobs);
    CHECK(n == (f.unit * groups + (f.is_v ? 1 : 0)) * kv_jobs + f.job);
    ++dealt[static_cast<std::size_t>(n)];
  }
  CHECK(std::all_of(dealt.begin(), dealt.end(), [](int d) { return d == 1; }));
  // Without V (the 16-bit P·V paths) a group is a unit's K.
  const FusedJob k_only = fused_job(kv_jobs, 1, ctas, 3, 2);  // slice 11: unit 2, job 1
  CHECK(k_only.unit == 2);
  CHECK(k_only.job == 1);
  CHECK_FALSE(k_only.is_v);
}

}  // namespace
}  // namespace sageattn::detail
