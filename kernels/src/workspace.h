// Where the quantized copies of Q, K and V and their scales live inside the caller's workspace.
// One layout, computed on the host, shared by the quantization and attention kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sageattn/sageattn.h"
#include "sageattn/tile_policy.h"

namespace sageattn::detail {

inline int round_up(int x, int m) {
  return (x + m - 1) / m * m;
}

struct Workspace {
  // (No Q: the attention kernels quantize it as they read it, quantize_q.cuh.)
  std::int8_t* k = nullptr;   // [B, Hkv, kv_pad, D]
  float* k_scale = nullptr;   // [B, Hkv, kv_pad / k_rows]
  float* k_sum = nullptr;     // [B, Hkv, D]: column sums of K (its mean times kv_len)
  std::uint8_t* v = nullptr;  // fp8 paths: [B, Hkv, D, kv_pad], keys permuted in groups of 32
  float* v_amax = nullptr;    // fp8 path: [B, Hkv, D]: max |V| per channel
  // The quantization's job queues (quantize.cu): [0] the next job's ticket, then per (batch,
  // KV head) one or two counts of statistics published (the fused queue's FP8 paths count K's
  // and V's apart; quantize.cu, statistics_counter).
  std::uint32_t* job_counters = nullptr;
  int q_pad = 0, kv_pad = 0, q_rows = 0, k_rows = 0;
  std::size_t stats_bytes = 0;  // k_sum, v_amax and job_counters: contiguous, zeroed per call
  std::size_t total = 0;
};

// With base == nullptr, only the sizes are computed.
inline Workspace layout_workspace(const Params& p, void* base) {
  Workspace w;
  w.q_pad = round_up(p.qo_len, kBlockM);
  w.kv_pad = round_up(p.kv_len, kBlockN);
  w.q_rows = granularity_rows(p.q_granularity);
  w.k_rows = granularity_rows(p.k_granularity);
  const std::size_t bk = static_cast<std::size_t>(p.batch) * p.heads_kv;
  const std::size_t d = p.head_dim;
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t offset = at;
    at += (bytes + 255) / 256 * 256;
    return base ? static_cast<char*>(base) + offset : nullptr;
  };
  w.k_sum = reinterpret_cast<float*>(take(bk * d * sizeof(float)));
  w.v_amax = reinterpret_cast<float*>(take(bk * d * sizeof(float)));
  w.job_counters = reinterpret_cast<std::uint32_t*>(take((1 + 2 * bk) * sizeof(std::uint32_t)));
  w.stats_bytes = at;
  w.k = reinterpret_cast<std::int8_t*>(take(bk * w.kv_pad * d));
  w.k_scale = reinterpret_cast<float*>(take(bk * (w.kv_pad / w.k_rows) * sizeof(float)));
  w.v = reinterpret_cast<std::uint8_t*>(take(uses_fp8_v(p.pv_path) ? bk * d * w.kv_pad : 0));
  w.total = at;
  return w;
}

}  // namespace sageattn::detail
