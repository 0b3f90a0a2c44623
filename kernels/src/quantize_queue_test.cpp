#include "quantize_queue.h"

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

}  // namespace
}  // namespace sageattn::detail
