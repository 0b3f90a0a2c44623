// The order of the quantization's job queue (quantize.cu), in one place so that the host can
// plan it, the kernel can decode it, and a host test can check it.
//
// Per (batch, KV head) "unit" there are S statistics jobs (K's column sums, V's channel maxima)
// and P quantizing jobs (K, V), which need the unit's statistics. Taken alone, the quantizing
// jobs run unit after unit. Each unit's block of statistics jobs is inserted `gap` quantizing
// jobs before that unit's first quantizing job (or at the front, for the first units): far
// enough ahead that it is done when they start, near enough that K and V are still in L2.
// A ticket t (0 .. units·(S+P)-1) names one job; statistics always come before their unit's
// quantizing jobs, which is what makes waiting on them deadlock-free.
#pragma once

#include "../common/host_device.h"

namespace sageattn::detail {

struct QueueShape {
  int units = 0;
  int stat_jobs = 0;   // S per unit (0: nothing needs statistics)
  int quant_jobs = 0;  // P per unit (at least 1)
  int gap = 0;         // in quantizing jobs
  int early = 0;       // units whose statistics open the queue: those with u·P <= gap
};

struct JobRef {
  int unit, job;  // job < stat_jobs: statistics job; else quantizing job (job - stat_jobs)
};

inline QueueShape make_queue_shape(int units, int stat_jobs, int quant_jobs, int gap) {
  QueueShape q;
  q.units = units;
  q.stat_jobs = stat_jobs;
  q.quant_jobs = quant_jobs;
  q.gap = gap < 0 ? 0 : gap;
  const long long early = static_cast<long long>(q.gap) / quant_jobs + 1;
  q.early = stat_jobs == 0 ? 0 : static_cast<int>(early < units ? early : units);
  return q;
}

// --- the fused queue (quantize.cu, fused_quantize_kernel) ---------------------------------------
// No tickets: slices are numbered unit by unit (slices_per_unit each), and CTA c of a grid of
// `ctas` takes slice r·ctas + c in its round r. In round r a CTA publishes its slice's part of the
// statistics, then waits until the unit of its round r - 1 slice is complete, and quantizes that
// slice. Every CTA publishes round r before it waits on round r - 1, so the waits end if each
// unit's slices lie in at most two consecutive rounds: no more slices per unit than CTAs (and
// every CTA resident, a cooperative launch). Slice numbers, plus two rounds past the last, must
// fit an int.
struct FusedSlice {
  int unit, job;  // job < slices_per_unit
};

SAGEATTN_HOST_DEVICE inline FusedSlice fused_slice(int slices_per_unit, int ctas, int cta,
                                                   int round) {
  const int n = round * ctas + cta;
  return {n / slices_per_unit, n % slices_per_unit};
}

// The fused queue deals barrier groups, not units: a unit's K slices are one group (they wait
// for K's mean) and, on the FP8 paths, its V slices the next (V's maxima). Slice r·ctas + cta of
// `groups` (1 or 2) groups per unit, kv_jobs slices each.
struct FusedJob {
  int unit, job;  // job < kv_jobs
  bool is_v;
};

SAGEATTN_HOST_DEVICE inline FusedJob fused_job(int kv_jobs, int groups, int ctas, int cta,
                                               int round) {
  const FusedSlice f = fused_slice(kv_jobs, ctas, cta, round);
  if (groups == 1) return {f.unit, f.job, false};
  return {f.unit >> 1, f.job, (f.unit & 1) != 0};
}

inline bool fused_queue_can_run(int units, int slices_per_unit, int resident_ctas) {
  return units > 0 && slices_per_unit > 0 && slices_per_unit <= resident_ctas &&
         static_cast<long long>(units) * slices_per_unit + 2LL * resident_ctas < 0x7fffffffLL;
}

SAGEATTN_HOST_DEVICE inline JobRef decode_ticket(const QueueShape& q, int t) {
  const int s = q.stat_jobs, p = q.quant_jobs;
  if (s == 0) return {t / p, t % p};
  if (t < q.early * s) return {t / s, t % s};
  // Unit u >= early has its statistics at tickets [u·(P+S) - gap, u·(P+S) - gap + S).
  int u = static_cast<int>((static_cast<long long>(t) + q.gap) / (p + s));
  if (u > q.units - 1) u = q.units - 1;
  int placed = q.early;  // statistics blocks before ticket t
  if (u >= q.early) {
    const int start = u * (p + s) - q.gap;
    if (t < start + s) return {u, t - start};
    placed = u + 1;
  }
  const int x = t - s * placed;  // position among the quantizing jobs
  return {x / p, s + x % p};
}

}  // namespace sageattn::detail
