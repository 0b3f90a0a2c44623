// A C ABI over the kernel library for the GPU test and benchmark scripts (kernels/tests), which
// load it with ctypes and pass torch tensors' pointers. Not part of any wheel: the package's
// binding (python/) links the static library directly.
#include <cmath>
#include <cstring>

#include "reference.h"
#include "sageattn/sageattn.h"

extern "C" {

// Mirrored field by field in kernels/tests/sageattn_ctypes.py. Varlen calls (sageattn.h: Varlen)
// set cu_seqlens_q and cu_seqlens_k (device int32 offsets, both or neither), total_q and total_k;
// q/k/v/o are then [total, heads, head_dim] views with strides (0, head, row), and batch counts
// the sequences. sharp_threshold: sageattn.h's Params::sharp_threshold (0: no guard). (No
// comments inside the struct: python/tests/test_library_facts.py reads its declarations.)
struct SageCapiParams {
  int dtype, batch, heads_q, heads_kv, qo_len, kv_len, head_dim;
  const void* q;
  long long q_strides[3];
  const void* k;
  long long k_strides[3];
  const void* v;
  long long v_strides[3];
  void* o;
  long long o_strides[3];
  float* lse;
  int causal;
  float sm_scale;
  int pv_path, q_granularity, k_granularity, smooth_k;
  const int* cu_seqlens_q;
  const int* cu_seqlens_k;
  int total_q, total_k;
  float sharp_threshold;
  int pv_accum;
};

}  // extern "C"

namespace {

sageattn::Params convert(const SageCapiParams& c) {
  sageattn::Params p;
  p.dtype = c.dtype == 0 ? sageattn::DType::f16 : sageattn::DType::bf16;
  p.batch = c.batch;
  p.heads_q = c.heads_q;
  p.heads_kv = c.heads_kv;
  p.qo_len = c.qo_len;
  p.kv_len = c.kv_len;
  p.head_dim = c.head_dim;
  p.q = {c.q, c.q_strides[0], c.q_strides[1], c.q_strides[2]};
  p.k = {c.k, c.k_strides[0], c.k_strides[1], c.k_strides[2]};
  p.v = {c.v, c.v_strides[0], c.v_strides[1], c.v_strides[2]};
  p.o = {c.o, c.o_strides[0], c.o_strides[1], c.o_strides[2]};
  p.lse = c.lse;
  p.causal = c.causal != 0;
  p.sm_scale = c.sm_scale;
  p.pv_path = static_cast<sageattn::PvPath>(c.pv_path);  // validate() refuses unknown numbers
  p.q_granularity =
      c.q_granularity == 0 ? sageattn::Granularity::per_block : sageattn::Granularity::per_warp;
  p.k_granularity =
      c.k_granularity == 0 ? sageattn::Granularity::per_block : sageattn::Granularity::per_warp;
  p.smooth_k = c.smooth_k != 0;
  p.varlen.cu_seqlens_q = c.cu_seqlens_q;
  p.varlen.cu_seqlens_k = c.cu_seqlens_k;
  p.varlen.total_q = c.total_q;
  p.varlen.total_k = c.total_k;
  p.sharp_threshold = c.sharp_threshold;
  p.pv_accum = static_cast<sageattn::PvAccum>(c.pv_accum);  // validate() refuses unknown numbers
  return p;
}

int report(const sageattn::Status& s, char* err, int err_len) {
  if (!s.ok && err && err_len > 0) {
    std::strncpy(err, s.message.c_str(), static_cast<std::size_t>(err_len - 1));
    err[err_len - 1] = '\0';
  }
  return s.ok ? 0 : 1;
}

}  // namespace

extern "C" {

size_t sageattn_capi_workspace_bytes(const SageCapiParams* c) {
  return sageattn::workspace_bytes(convert(*c));
}

// which: 0 forward, 1 quantize only, 2 attention only
int sageattn_capi_run(const SageCapiParams* c, int which, void* workspace, size_t bytes,
                      void* stream, char* err, int err_len) {
  const sageattn::Params p = convert(*c);
  const auto s = static_cast<cudaStream_t>(stream);
  switch (which) {
    case 1:
      return report(sageattn::quantize(p, workspace, bytes, s), err, err_len);
    case 2:
      return report(sageattn::attention(p, workspace, bytes, s), err, err_len);
    default:
      return report(sageattn::forward(p, workspace, bytes, s), err, err_len);
  }
}

// Host float64 references; q/k/v/out contiguous [B, H, L, D], lse [B, Hq, Lq] (may be null).
void sageattn_capi_reference(const SageCapiParams* c, int quantized, const double* q,
                             const double* k, const double* v, double* out, double* lse) {
  const sageattn::Params p = convert(*c);
  const double sm_scale =
      c->sm_scale > 0 ? c->sm_scale : 1.0 / std::sqrt(static_cast<double>(c->head_dim));
  const sageattn::reference::Problem problem{
      p.batch, p.heads_q, p.heads_kv, p.qo_len, p.kv_len, p.head_dim, p.causal, sm_scale, q, k, v};
  if (quantized) {
    sageattn::reference::quantized_attention(problem, p.pv_path, p.pv_accum, p.dtype,
                                             p.q_granularity, p.k_granularity, p.smooth_k, out,
                                             lse);
  } else {
    sageattn::reference::plain_attention(problem, out, lse);
  }
}

const char* sageattn_capi_architectures() {
  return sageattn::compiled_architectures();
}

}  // extern "C"
