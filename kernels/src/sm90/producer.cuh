// The producer warpgroup of the Hopper kernel (attention_sm90.cuh): one thread brings each key
// block's K and V tiles with the TMA into a ring of kStages shared-memory stages, and K's scales
// beside them, each stage once every consumer warp released it.
#pragma once

#include <cstdint>

#include "config.cuh"
#include "hopper_primitives.cuh"

namespace sageattn::detail {

// Block nb's K and V into stage nb % kStages, by the producer thread, once the stage is free.
template <class Cfg>
__device__ __forceinline__ void sm90_load_kv(const Sm90Cta<Cfg::kVarlen>& c, int nb) {
  constexpr int D = Cfg::kD, kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  const Sm90Args& args = c.args;
  std::uint64_t* const k_full = c.k_full;
  std::uint64_t* const v_full = c.v_full;
  unsigned char* const s_k = c.s_k;
  unsigned char* const s_v = c.s_v;
  const int kv_head = c.kv_head;
  // The workspace's copies: the sequence's unit and its rows there (sequence.h).
  const int unit = c.seq.unit, row = c.seq.unit_row0 + nb * kBlockN;
  const int stage = nb % kStages;
  sm90::mbarrier_arrive_expect_tx(&k_full[stage], Cfg::kKBytes);
#pragma unroll
  for (int box = 0; box < D / Cfg::kQKBoxBytes; ++box) {  // one below d=256
    sm90::tma_load_3d(s_k + stage * Cfg::kKBytes + box * kBlockN * Cfg::kQKBoxBytes, &args.k_map,
                      &k_full[stage], box * Cfg::kQKBoxBytes, row, unit);
  }
  sm90::mbarrier_arrive_expect_tx(&v_full[stage], Cfg::kVLoadBytes);
  if constexpr (Cfg::kPv8) {
    sm90::tma_load_3d(s_v + stage * Cfg::kVBytes, &args.v_map, &v_full[stage], row, 0, unit);
  } else {
    // The caller's V: its own rows (a varlen call's map has one batch of all the rows).
    const int key = c.seq.kv_start + nb * kBlockN;
    const int batch = Cfg::kVarlen ? 0 : c.batch;
#pragma unroll
    for (int box = 0; box < Cfg::kDv / 64; ++box) {
      sm90::tma_load_4d(s_v + stage * Cfg::kVBytes + box * Cfg::kVBoxBytes, &args.v_map,
                        &v_full[stage], 64 * box, key, kv_head, batch);
    }
  }
}

// The producer's work after the set-up: the first round's tiles were requested there.
template <class Cfg>
__device__ __forceinline__ void sm90_produce(const Sm90Cta<Cfg::kVarlen>& c) {
  constexpr int kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  const AttentionArgs& a = c.args.a;
  const int warp = c.warp, lane = c.lane, first_round = c.first_round, n_blocks = c.n_blocks;
  const float* const k_scales = c.k_scales;
  float* const s_kscale = c.s_kscale;
  std::uint64_t* const k_full = c.k_full;
  std::uint64_t* const empty = c.empty;
  auto load_kv = [&](int nb) { sm90_load_kv<Cfg>(c, nb); };
  if (warp == 0 && lane == 0) {  // the first round's tiles were requested at set-up
    // Block nb's 8 K scales (one per 16-key column group; k_rows is 16 or 64, so a scale may
    // repeat) into its stage, then the producer's arrival on k_full: a consumer that saw the
    // stage's K also sees its scales. Staged here, the consumers never wait for a global
    // load: loaded by them a turn ahead, the copies ptxas made of the loaded values into
    // other registers still waited for the load in the same turn (kernels/NOTES.md,
    // sm90-kscale-in-smem).
    const int k_shift = __ffs(a.k_rows) - 1;
    // The last block may reach past the rows the quantization wrote (dense: kv_pad rows).
    const int k_scale_last = c.seq.kv_rows / a.k_rows - 1;
    auto stage_kscales = [&](int nb) {
      float* dst = s_kscale + nb % kStages * Cfg::kScaleGroups;
      float scale[Cfg::kScaleGroups];  // all loads issued before the stores
#pragma unroll
      for (int grp = 0; grp < Cfg::kScaleGroups; ++grp)
        scale[grp] = k_scales[min((nb * kBlockN + 16 * grp) >> k_shift, k_scale_last)];
#pragma unroll
      for (int grp = 0; grp < Cfg::kScaleGroups; ++grp)
        dst[grp] = scale[grp];
      sm90::mbarrier_arrive(&k_full[nb % kStages]);
    };
    for (int nb = 0; nb < first_round; ++nb)
      stage_kscales(nb);
    for (int nb = first_round; nb < n_blocks; ++nb) {
      // Stage nb % kStages was last filled for block nb - kStages; its release completed
      // phase (nb / kStages - 1).
      sm90::mbarrier_wait(&empty[nb % kStages], ((nb / kStages) & 1) ^ 1);
      load_kv(nb);
      stage_kscales(nb);
    }
  }
}

}  // namespace sageattn::detail
