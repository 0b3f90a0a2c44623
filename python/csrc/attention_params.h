// The one translation of the operator's arguments into the kernels' sageattn::Params, shared by
// both torch bindings (binding.cpp on torch's C++ API, binding_stable.cpp on its stable C ABI).
// It is a template over the tensor type: at::Tensor and torch::stable::Tensor both answer
// size(i), stride(i) and data_ptr(), and nothing here needs more.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "sageattn/sageattn.h"

namespace sageattention {

// The operator's integer encodings: kernels/manifest.py's, as sageattention/core.py's _LAYOUTS
// and _GRANULARITY.
inline constexpr std::int64_t kLayoutHnd = static_cast<std::int64_t>(sageattn::Layout::HND);
inline constexpr std::int64_t kPerBlock =
    static_cast<std::int64_t>(sageattn::Granularity::per_block);

// [B, H, S, D] for HND, [B, S, H, D] for NHD; the kernels take (batch, head, seq) strides.
template <typename Tensor>
sageattn::TensorView tensor_view(const Tensor& t, bool hnd) {
  return {t.data_ptr(), t.stride(0), hnd ? t.stride(1) : t.stride(2),
          hnd ? t.stride(2) : t.stride(1)};
}

template <typename Tensor>
std::int64_t query_heads(const Tensor& q, std::int64_t layout) {
  return layout == kLayoutHnd ? q.size(1) : q.size(2);
}

template <typename Tensor>
std::int64_t query_length(const Tensor& q, std::int64_t layout) {
  return layout == kLayoutHnd ? q.size(2) : q.size(1);
}

// A varlen call's packed [total, heads, head_dim] tensor: the sequences lie along its rows.
template <typename Tensor>
sageattn::TensorView packed_view(const Tensor& t) {
  return {t.data_ptr(), 0, t.stride(1), t.stride(0)};
}

// What the operator's arguments say beside the shapes: both kinds of call share it.
struct CallOptions {
  sageattn::DType dtype;
  bool causal;
  double sm_scale;
  std::int64_t pv_path, pv_accum, q_granularity, k_granularity;
  bool smooth_k;
  double sharp_threshold;  // 0 or infinity: no sharp-tile guard (sageattn.h)
};

inline sageattn::Params params_with(const CallOptions& c) {
  sageattn::Params p;
  p.dtype = c.dtype;
  p.causal = c.causal;
  p.sm_scale = static_cast<float>(c.sm_scale);
  p.pv_path = static_cast<sageattn::PvPath>(c.pv_path);     // validate() refuses unknown numbers
  p.pv_accum = static_cast<sageattn::PvAccum>(c.pv_accum);  // and accumulations the path lacks
  p.q_granularity = c.q_granularity == kPerBlock ? sageattn::Granularity::per_block
                                                 : sageattn::Granularity::per_warp;
  p.k_granularity = c.k_granularity == kPerBlock ? sageattn::Granularity::per_block
                                                 : sageattn::Granularity::per_warp;
  p.smooth_k = c.smooth_k;
  p.sharp_threshold = static_cast<float>(c.sharp_threshold);  // validate() refuses NaN and < 0
  return p;
}

// Everything but the output pointers (o, lse), which the caller allocates from these shapes.
template <typename Tensor>
sageattn::Params attention_params(const Tensor& q, const Tensor& k, const Tensor& v,
                                  std::int64_t layout, const CallOptions& options) {
  const bool hnd = layout == kLayoutHnd;
  sageattn::Params p = params_with(options);
  p.batch = static_cast<int>(q.size(0));
  p.heads_q = static_cast<int>(query_heads(q, layout));
  p.heads_kv = static_cast<int>(query_heads(k, layout));
  p.qo_len = static_cast<int>(query_length(q, layout));
  p.kv_len = static_cast<int>(query_length(k, layout));
  p.head_dim = static_cast<int>(q.size(3));
  p.q = tensor_view(q, hnd);
  p.k = tensor_view(k, hnd);
  p.v = tensor_view(v, hnd);
  return p;
}

// A varlen call: q [total_q, heads_q, D], k and v [total_k, heads_kv, D], cu_seqlens int32 with
// one more value than there are sequences, max_seqlen the longest sequences' lengths (sageattn.h:
// Varlen). The same: everything but the output pointers.
template <typename Tensor>
sageattn::Params varlen_attention_params(const Tensor& q, const Tensor& k, const Tensor& v,
                                         const Tensor& cu_seqlens_q, const Tensor& cu_seqlens_k,
                                         std::int64_t max_seqlen_q, std::int64_t max_seqlen_k,
                                         const CallOptions& options) {
  sageattn::Params p = params_with(options);
  p.batch = static_cast<int>(cu_seqlens_q.size(0) - 1);
  p.heads_q = static_cast<int>(q.size(1));
  p.heads_kv = static_cast<int>(k.size(1));
  p.qo_len = static_cast<int>(max_seqlen_q);
  p.kv_len = static_cast<int>(max_seqlen_k);
  p.head_dim = static_cast<int>(q.size(2));
  p.q = packed_view(q);
  p.k = packed_view(k);
  p.v = packed_view(v);
  p.varlen.cu_seqlens_q = static_cast<const std::int32_t*>(cu_seqlens_q.data_ptr());
  p.varlen.cu_seqlens_k = static_cast<const std::int32_t*>(cu_seqlens_k.data_ptr());
  p.varlen.total_q = static_cast<int>(q.size(0));
  p.varlen.total_k = static_cast<int>(k.size(0));
  return p;
}

// The library's own choice of P·V path (its PvPath number) for a query length and head dim (0:
// not known), which sageattn's Python rule (plan.path_for_capability) must match: the CPU tests
// compare the two.
inline std::int64_t default_pv_path_number(std::int64_t major, std::int64_t minor,
                                           std::int64_t qo_len, std::int64_t head_dim) {
  const auto to_int = [](std::int64_t n) {
    return static_cast<int>(std::clamp<std::int64_t>(n, std::numeric_limits<int>::min(),
                                                     std::numeric_limits<int>::max()));
  };
  return static_cast<std::int64_t>(sageattn::default_pv_path(
      static_cast<int>(major), static_cast<int>(minor), to_int(qo_len), to_int(head_dim)));
}

// The library's capability rule (sageattn::capability_gap) for a PvPath number, as the
// CapabilityGap's number; -1 for a number that is no path. sageattention/core.py applies the
// same rule in Python (it must decide before tracing an op call); the CPU tests compare them.
inline std::int64_t capability_gap_number(std::int64_t pv_path, std::int64_t major,
                                          std::int64_t minor, bool has_sm90a) {
  if (pv_path < 0 || pv_path > static_cast<std::int64_t>(sageattn::PvPath::fp16_sm90)) return -1;
  return static_cast<std::int64_t>(sageattn::capability_gap(static_cast<sageattn::PvPath>(pv_path),
                                                            static_cast<int>(major),
                                                            static_cast<int>(minor), has_sm90a));
}

// The schema both bindings register: sageattention/_ops.py registers the fake (meta)
// implementation for it, so torch.compile traces the op without a graph break.
inline constexpr const char* kAttentionSchema =
    "attention(Tensor q, Tensor k, Tensor v, int layout, bool causal, float sm_scale, int pv_path, "
    "int pv_accum, int q_granularity, int k_granularity, bool smooth_k, float sharp_threshold, "
    "bool return_lse) "
    "-> (Tensor, Tensor)";
inline constexpr const char* kAttentionVarlenSchema =
    "attention_varlen(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, Tensor cu_seqlens_k, "
    "int max_seqlen_q, int max_seqlen_k, bool causal, float sm_scale, int pv_path, "
    "int pv_accum, int q_granularity, int k_granularity, bool smooth_k, float sharp_threshold, "
    "bool return_lse) "
    "-> (Tensor, Tensor)";
inline constexpr const char* kHasSm90aSchema = "has_sm90a() -> bool";
inline constexpr const char* kDefaultPvPathSchema =
    "default_pv_path(int major, int minor, int qo_len, int head_dim) -> int";
inline constexpr const char* kCapabilityGapSchema =
    "capability_gap(int pv_path, int major, int minor, bool has_sm90a) -> int";

}  // namespace sageattention
