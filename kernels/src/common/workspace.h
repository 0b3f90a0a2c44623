// Where the quantized copies of Q, K and V and their scales live inside the caller's workspace.
// One layout, computed on the host, shared by the quantization and attention kernels.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "sageattn/sageattn.h"
#include "sequence.h"
#include "sharp_tiles.h"
#include "tile_policy.h"

namespace sageattn::detail {

inline int round_up(int x, int m) {
  return (x + m - 1) / m * m;
}

struct Workspace {
  // (No Q: the attention kernels quantize it as they read it, quantize_q.cuh.)
  // K and V's copies are kept in "units" of unit_rows rows: one per (batch, KV head) in a dense
  // call (unit b·Hkv + h, its keys from row 0), one per KV head in a varlen call (sequence b's
  // keys from row varlen_row_base of it: sequence.h). Their statistics are per sequence either
  // way: [B, Hkv, ...].
  std::int8_t* k = nullptr;   // [units, unit_rows, D]
  float* k_scale = nullptr;   // [units, unit_rows / k_rows]
  float* k_sum = nullptr;     // [B, Hkv, D]: column sums of K (its mean times its length)
  std::uint8_t* v = nullptr;  // fp8 paths: [units, D, unit_rows], keys permuted in groups of 32
  float* v_amax = nullptr;    // fp8 path: [B, Hkv, D]: max |V| per channel
  // The quantization's job queues (quantize.cu): [0] the next job's ticket, then per (batch,
  // KV head) one or two counts of statistics published (the fused queue's FP8 paths count K's
  // and V's apart; quantize.cu, statistics_counter).
  std::uint32_t* job_counters = nullptr;
  // The sharp-tile guard (sharp_tiles.h; null without it): [0] the worklist's entries, [1] the
  // sharp kernel's CTAs done (the last one resets both for the next call), then the entries.
  std::uint32_t* sharp_count = nullptr;
  SharpTile* sharp_tiles = nullptr;
  int sharp_capacity = 0;
  int q_pad = 0;              // the query rows the grids cover per sequence
  int kv_pad = 0;             // keys per sequence, padded to whole key blocks (dense: unit_rows)
  int unit_rows = 0;          // rows of each unit
  int unit_scales = 0;        // K scales of each unit: unit_rows / k_rows
  int unit_batch_stride = 0;  // units per batch: Hkv (dense), 0 (varlen: units are KV heads)
  int q_rows = 0, k_rows = 0;
  // k_sum, v_amax, job_counters and sharp_count: contiguous, zeroed per call
  std::size_t stats_bytes = 0;
  std::size_t total = 0;
};

// Rows of each workspace unit: kv_pad, or for a varlen call every sequence's region
// (sequence.h). Over INT_MAX rows the kernels' row numbers (and the TMA's coordinates) would
// not hold them: validate() refuses such calls.
inline std::int64_t workspace_unit_rows(const Params& p) {
  return p.is_varlen() ? varlen_workspace_rows(p.varlen.total_k, p.batch)
                       : round_up(p.kv_len, kBlockN);
}

// A varlen call's own conditions (sageattn.h: Varlen). The offsets themselves live on the GPU:
// reading them would cost a synchronisation per call (and break CUDA graph capture), so the
// kernels clamp what they find there instead.
inline Status check_varlen(const Params& p) {
  const Varlen& v = p.varlen;
  if ((v.cu_seqlens_q == nullptr) != (v.cu_seqlens_k == nullptr)) {
    return Status::error(
        "sageattn: a varlen call needs both cu_seqlens_q and cu_seqlens_k (or neither)");
  }
  if (!p.is_varlen()) return Status::success();
  for (const auto* cu : {v.cu_seqlens_q, v.cu_seqlens_k}) {
    if (reinterpret_cast<std::uintptr_t>(cu) % alignof(std::int32_t) != 0) {
      return Status::error("sageattn: cu_seqlens must be int32 arrays (4-byte aligned)");
    }
  }
  if (v.total_q < 1 || v.total_k < 1) {
    return Status::error(
        "sageattn: a varlen call needs at least one query row and one key row "
        "(got total_q " +
        std::to_string(v.total_q) + ", total_k " + std::to_string(v.total_k) + ")");
  }
  // The workspace keeps each KV head's sequences in one region whose rows the kernels number
  // with 32-bit integers (sequence.h: varlen_workspace_rows).
  const std::int64_t rows = varlen_workspace_rows(v.total_k, p.batch);
  if (rows > std::numeric_limits<int>::max()) {
    return Status::error(
        "sageattn: " + std::to_string(p.batch) + " sequences of " + std::to_string(v.total_k) +
        " keys in all need " + std::to_string(rows) + " workspace rows per KV head; at most " +
        std::to_string(std::numeric_limits<int>::max()) + ": split the batch into several calls");
  }
  return Status::success();
}

// With base == nullptr, only the sizes are computed.
inline Workspace layout_workspace(const Params& p, void* base) {
  Workspace w;
  w.q_pad = round_up(p.qo_len, kBlockM);
  w.kv_pad = round_up(p.kv_len, kBlockN);
  w.unit_rows = static_cast<int>(workspace_unit_rows(p));
  w.unit_batch_stride = p.is_varlen() ? 0 : p.heads_kv;
  w.q_rows = granularity_rows(p.q_granularity);
  w.k_rows = granularity_rows(p.k_granularity);
  w.unit_scales = w.unit_rows / w.k_rows;
  const std::size_t bk = static_cast<std::size_t>(p.batch) * p.heads_kv;
  const std::size_t units = p.is_varlen() ? static_cast<std::size_t>(p.heads_kv) : bk;
  const std::size_t rows = static_cast<std::size_t>(w.unit_rows);
  const std::size_t d = p.head_dim;
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t offset = at;
    at += (bytes + 255) / 256 * 256;
    return base ? static_cast<char*>(base) + offset : nullptr;
  };
  auto take_if = [&](bool wanted, std::size_t bytes) { return wanted ? take(bytes) : nullptr; };
  w.k_sum = reinterpret_cast<float*>(take(bk * d * sizeof(float)));
  w.v_amax = reinterpret_cast<float*>(take(bk * d * sizeof(float)));
  w.job_counters = reinterpret_cast<std::uint32_t*>(take((1 + 2 * bk) * sizeof(std::uint32_t)));
  const bool guard = p.redoes_tiles();
  w.sharp_count = reinterpret_cast<std::uint32_t*>(take_if(guard, 2 * sizeof(std::uint32_t)));
  w.stats_bytes = at;
  w.k = reinterpret_cast<std::int8_t*>(take(units * rows * d));
  w.k_scale = reinterpret_cast<float*>(take(units * w.unit_scales * sizeof(float)));
  w.v = reinterpret_cast<std::uint8_t*>(take(uses_fp8_v(p.pv_path) ? units * d * rows : 0));
  // The worklist's entries last: 32 bytes per 64 query rows of each query head, the only part
  // of the workspace that grows with Q. (validate() refuses calls that would need more than
  // INT_MAX entries.)
  const std::int64_t capacity = guard ? sharp_tile_capacity(p) : 0;
  w.sharp_capacity = static_cast<int>(std::min<std::int64_t>(capacity, INT32_MAX));
  w.sharp_tiles = reinterpret_cast<SharpTile*>(take_if(guard, capacity * sizeof(SharpTile)));
  w.total = at;
  return w;
}

}  // namespace sageattn::detail
