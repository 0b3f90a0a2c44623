// The per-torch binding, on torch's C++ API (binding_stable.cpp is the other, on its stable C
// ABI; the two are the only C++ files that include torch headers, and attention_params.h holds
// what they share). It registers
// the operators sageattention::attention and attention_varlen through TORCH_LIBRARY (schema) and
// TORCH_LIBRARY_IMPL (CUDA kernel); the fake (meta) implementation is registered from Python
// (sageattention/_ops.py, which loads this library as _kernels.so), so torch.compile traces it
// without a graph break. No Python headers: the library is loaded with torch.ops.load_library and
// works with every Python of the wheel. Narrow headers, not ATen/ATen.h and
// ATen/cuda/CUDAContext.h: those pull in every operator and cuBLAS/cuSPARSE, which makes this file
// the slowest of the wheel to compile (once per Python) and needs the toolkit's cuBLAS headers.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>
#include <tuple>

#include "attention_params.h"

namespace {

// The Python layer validates and explains; these checks only guard the C++ entry point.
sageattn::DType checked_dtype(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              int64_t dims) {
  TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(),
              "sageattention: q, k, v must be CUDA tensors");
  TORCH_CHECK(q.dim() == dims && k.dim() == dims && v.dim() == dims,
              "sageattention: q, k, v must be ", dims, "-D");
  TORCH_CHECK(q.scalar_type() == k.scalar_type() && q.scalar_type() == v.scalar_type() &&
                  (q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16),
              "sageattention: q, k, v must all be float16 or all bfloat16");
  return q.scalar_type() == at::kHalf ? sageattn::DType::f16 : sageattn::DType::bf16;
}

// Runs the call `p` (its o and lse set) with a workspace from torch's caching allocator: cheap
// per call, and legal during CUDA graph capture.
void run(const sageattn::Params& p, const at::Tensor& q) {
  const std::size_t bytes = sageattn::workspace_bytes(p);
  at::Tensor workspace = at::empty({static_cast<int64_t>(bytes)}, q.options().dtype(at::kByte));
  const sageattn::Status status = sageattn::forward(
      p, workspace.data_ptr(), bytes, c10::cuda::getCurrentCUDAStream(q.device().index()));
  TORCH_CHECK(status.ok, status.message);
}

std::tuple<at::Tensor, at::Tensor> attention_cuda(const at::Tensor& q, const at::Tensor& k,
                                                  const at::Tensor& v, int64_t layout, bool causal,
                                                  double sm_scale, int64_t pv_path,
                                                  int64_t pv_accum, int64_t q_granularity,
                                                  int64_t k_granularity, bool smooth_k,
                                                  double sharp_threshold, bool return_lse) {
  const sageattn::DType dtype = checked_dtype(q, k, v, 4);
  const c10::cuda::CUDAGuard guard(q.device());
  sageattn::Params p =
      sageattention::attention_params(q, k, v, layout,
                                      {dtype, causal, sm_scale, pv_path, pv_accum, q_granularity,
                                       k_granularity, smooth_k, sharp_threshold});
  at::Tensor o = at::empty_like(q);
  at::Tensor lse =
      at::empty(return_lse ? at::IntArrayRef{q.size(0), p.heads_q, p.qo_len} : at::IntArrayRef{0},
                q.options().dtype(at::kFloat));
  p.o = sageattention::tensor_view(o, layout == sageattention::kLayoutHnd);
  p.lse = return_lse ? lse.data_ptr<float>() : nullptr;
  run(p, q);
  return {o, lse};
}

std::tuple<at::Tensor, at::Tensor> attention_varlen_cuda(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& cu_seqlens_q,
    const at::Tensor& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, bool causal,
    double sm_scale, int64_t pv_path, int64_t pv_accum, int64_t q_granularity,
    int64_t k_granularity, bool smooth_k, double sharp_threshold, bool return_lse) {
  const sageattn::DType dtype = checked_dtype(q, k, v, 3);
  for (const at::Tensor* cu : {&cu_seqlens_q, &cu_seqlens_k}) {
    TORCH_CHECK(cu->is_cuda() && cu->scalar_type() == at::kInt && cu->dim() == 1 &&
                    cu->is_contiguous() && cu->size(0) == cu_seqlens_q.size(0) && cu->size(0) >= 2,
                "sageattention: cu_seqlens_q and cu_seqlens_k must be contiguous int32 CUDA "
                "tensors of one length (sequences + 1)");
  }
  TORCH_CHECK(max_seqlen_q >= 1 && max_seqlen_k >= 1 && max_seqlen_q <= INT32_MAX &&
                  max_seqlen_k <= INT32_MAX,
              "sageattention: max_seqlen_q and max_seqlen_k must be between 1 and 2^31 - 1");
  const c10::cuda::CUDAGuard guard(q.device());
  sageattn::Params p = sageattention::varlen_attention_params(
      q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
      {dtype, causal, sm_scale, pv_path, pv_accum, q_granularity, k_granularity, smooth_k,
       sharp_threshold});
  at::Tensor o = at::empty_like(q);
  at::Tensor lse =
      at::empty(return_lse ? at::IntArrayRef{p.heads_q, q.size(0)} : at::IntArrayRef{0},
                q.options().dtype(at::kFloat));
  p.o = sageattention::packed_view(o);
  p.lse = return_lse ? lse.data_ptr<float>() : nullptr;
  run(p, q);
  return {o, lse};
}

}  // namespace

TORCH_LIBRARY(sageattention, m) {
  // Whether the kernels include the Hopper wgmma kernel (sm_90a code): sageattn's default there.
  m.def(sageattention::kHasSm90aSchema, []() { return sageattn::has_sm90a(); });
  m.def(sageattention::kDefaultPvPathSchema, &sageattention::default_pv_path_number);
  m.def(sageattention::kCapabilityGapSchema, &sageattention::capability_gap_number);
  m.def(sageattention::kAttentionSchema);
  m.def(sageattention::kAttentionVarlenSchema);
}

TORCH_LIBRARY_IMPL(sageattention, CUDA, m) {
  m.impl("attention", &attention_cuda);
  m.impl("attention_varlen", &attention_varlen_cuda);
}
