// Measurement only: SM-clock stamps of the Hopper kernel's turns and CTA milestones, printed by
// a one-thread kernel after the launch (SAGEATTN_SM90_TRACE=1; lab/trace/sm90_trace.sh).
// The macros are empty otherwise. SM90_TRACE(point) needs `tracing`, `nb` and `wg` in scope,
// SM90_CTA_STAMP(who, stamp) needs `cta_id`.
#pragma once

#include <cstdio>

#include "../common/tile_config.h"

// SAGEATTN_SM90_TRACE=1 (a knob, tile_config.h): the first warp of each consumer warpgroup of
// one CTA (the middle query tile of head 0) stamps the SM clock at six points of every turn of
// the third launch into device memory; a one-thread kernel launched after each prints them once
// ("sm90trace" lines; lab/trace/trace_summary.py turns them into phase durations). Not
// printed by the kernel itself: a call (printf) in it makes ptxas serialize every wgmma.

namespace sageattn::detail {

#if SAGEATTN_SM90_TRACE
constexpr int kTraceTurns = 64;
__device__ long long g_sm90_trace[2][kTraceTurns][6];
__device__ unsigned g_sm90_trace_launch[2];
__device__ int g_sm90_trace_blocks;
__device__ bool g_sm90_trace_printed;

// The CTA timeline: for every CTA (up to kTraceCtas), the SM it ran on and SM-clock stamps at
// its milestones, so that the time a CTA spends outside its steady turns (set-up, Q's arrival,
// the first turn, the epilogue) and the gap until the next CTA starts on the same SM can be
// told apart. Printed for the CTAs of one SM.
enum CtaStamp {
  kCtaEntry,     // thread 0, first instruction
  kCtaSetUp,     // thread 0, after the barriers' set-up and __syncthreads
  kCtaQ,         // warpgroup 0 (warp 4, lane 0), its Q quantized into the tile
  kCtaFirst0,    // the first turn (Q·Kᵀ and its softmax) done, warpgroup 0
  kCtaFirst1,    // ... warpgroup 1
  kCtaLoopEnd0,  // the last turn done (the last P·V merged), warpgroup 0
  kCtaLoopEnd1,  // ... warpgroup 1
  kCtaEnd0,      // the epilogue's stores issued, warpgroup 0
  kCtaEnd1,      // ... warpgroup 1
  kCtaStamps
};
constexpr int kTraceCtas = 16384;
__device__ long long g_sm90_cta[kTraceCtas][kCtaStamps + 1];  // + the SM id

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

template <int D>
__global__ void sm90_trace_print(int ctas) {
  if (g_sm90_trace_launch[0] < 3 || g_sm90_trace_launch[1] < 3 || g_sm90_trace_printed) return;
  g_sm90_trace_printed = true;
  const int blocks = g_sm90_trace_blocks;
  for (int wg = 0; wg < 2; ++wg) {
    for (int i = 0; i < min(blocks + 1, kTraceTurns); ++i) {
      const long long* t = g_sm90_trace[wg][i];
      printf("sm90trace D=%d blocks=%d wg=%d turn=%d %lld %lld %lld %lld %lld %lld\n", D, blocks,
             wg, i, t[0], t[1], t[2], t[3], t[4], t[5]);
    }
  }
  const unsigned sm = g_sm90_cta[0][kCtaStamps];  // the SM of CTA 0
  for (int c = 0; c < min(ctas, kTraceCtas); ++c) {
    const long long* t = g_sm90_cta[c];
    if (t[kCtaStamps] != sm) continue;
    printf("sm90cta D=%d cta=%d sm=%u %lld %lld %lld %lld %lld %lld %lld %lld %lld\n", D, c, sm,
           t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
  }
}
#define SM90_TRACE(point)                                                     \
  do {                                                                        \
    if (tracing && nb < kTraceTurns) g_sm90_trace[wg][nb][point] = clock64(); \
  } while (0)
// A CTA-timeline stamp, by the thread that `who` names.
#define SM90_CTA_STAMP(who, stamp)                                           \
  do {                                                                       \
    if ((who) && cta_id < kTraceCtas) g_sm90_cta[cta_id][stamp] = clock64(); \
  } while (0)
#else
#define SM90_TRACE(point) \
  do {                    \
  } while (0)
#define SM90_CTA_STAMP(who, stamp) \
  do {                             \
  } while (0)
#endif

}  // namespace sageattn::detail
