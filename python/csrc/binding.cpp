// The torch binding: the only C++ file of the project that includes torch headers. It registers
// one operator, sageattention::attention, through TORCH_LIBRARY (schema) and
// TORCH_LIBRARY_IMPL (CUDA kernel); the fake (meta) implementation is registered from Python
// (sageattention/_ops.py, which loads this library as _kernels.so), so torch.compile traces it without a graph break. No Python headers:
// the library is loaded with torch.ops.load_library and works with every Python of the wheel.
// Narrow headers, not ATen/ATen.h and ATen/cuda/CUDAContext.h: those pull in every operator and
// cuBLAS/cuSPARSE, which makes this file the slowest of the wheel to compile (once per Python)
// and needs the toolkit's cuBLAS headers.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <tuple>

#include "sageattn/sageattn.h"

namespace {

sageattn::TensorView view(const at::Tensor& t, bool hnd) {
  // [B, H, S, D] for HND, [B, S, H, D] for NHD; the kernels take (batch, head, seq) strides.
  return {t.data_ptr(), t.stride(0), hnd ? t.stride(1) : t.stride(2), hnd ? t.stride(2) : t.stride(1)};
}

std::tuple<at::Tensor, at::Tensor> attention_cuda(const at::Tensor& q, const at::Tensor& k,
                                                  const at::Tensor& v, int64_t layout, bool causal,
                                                  double sm_scale, int64_t pv_path,
                                                  int64_t q_granularity, int64_t k_granularity,
                                                  bool smooth_k, bool return_lse) {
  // The Python layer validates and explains; these checks only guard the C++ entry point.
  TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(), "sageattention: q, k, v must be CUDA tensors");
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "sageattention: q, k, v must be 4-D");
  TORCH_CHECK(q.scalar_type() == k.scalar_type() && q.scalar_type() == v.scalar_type() &&
                  (q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16),
              "sageattention: q, k, v must all be float16 or all bfloat16");
  const bool hnd = layout == 0;
  const c10::cuda::CUDAGuard guard(q.device());
  at::Tensor o = at::empty_like(q);
  const int64_t heads_q = hnd ? q.size(1) : q.size(2), qo_len = hnd ? q.size(2) : q.size(1);
  at::Tensor lse = at::empty(return_lse ? at::IntArrayRef{q.size(0), heads_q, qo_len} : at::IntArrayRef{0},
                             q.options().dtype(at::kFloat));
  sageattn::Params p;
  p.dtype = q.scalar_type() == at::kHalf ? sageattn::DType::f16 : sageattn::DType::bf16;
  p.batch = static_cast<int>(q.size(0));
  p.heads_q = static_cast<int>(heads_q);
  p.heads_kv = static_cast<int>(hnd ? k.size(1) : k.size(2));
  p.qo_len = static_cast<int>(qo_len);
  p.kv_len = static_cast<int>(hnd ? k.size(2) : k.size(1));
  p.head_dim = static_cast<int>(q.size(3));
  p.q = view(q, hnd);
  p.k = view(k, hnd);
  p.v = view(v, hnd);
  p.o = view(o, hnd);
  p.lse = return_lse ? lse.data_ptr<float>() : nullptr;
  p.causal = causal;
  p.sm_scale = static_cast<float>(sm_scale);
  p.pv_path = static_cast<sageattn::PvPath>(pv_path);  // validate() refuses unknown numbers
  p.q_granularity = q_granularity == 0 ? sageattn::Granularity::per_block : sageattn::Granularity::per_warp;
  p.k_granularity = k_granularity == 0 ? sageattn::Granularity::per_block : sageattn::Granularity::per_warp;
  p.smooth_k = smooth_k;
  const std::size_t bytes = sageattn::workspace_bytes(p);
  // From torch's caching allocator: cheap per call, and legal during CUDA graph capture.
  at::Tensor workspace = at::empty({static_cast<int64_t>(bytes)}, q.options().dtype(at::kByte));
  const sageattn::Status status =
      sageattn::forward(p, workspace.data_ptr(), bytes, c10::cuda::getCurrentCUDAStream(q.device().index()));
  TORCH_CHECK(status.ok, status.message);
  return {o, lse};
}

}  // namespace

TORCH_LIBRARY(sageattention, m) {
  // Whether the kernels include the Hopper wgmma kernel (sm_90a code): sageattn's default there.
  m.def("has_sm90a() -> bool", []() { return sageattn::has_sm90a(); });
  // The library's own choice of P·V path (its PvPath number), which sageattn's Python rule
  // (core.path_for_capability) must match: the CPU tests compare the two.
  m.def("default_pv_path(int major, int minor, int qo_len) -> int",
        [](int64_t major, int64_t minor, int64_t qo_len) {
          const int64_t rows = std::min<int64_t>(qo_len, std::numeric_limits<int>::max());
          return static_cast<int64_t>(sageattn::default_pv_path(
              static_cast<int>(major), static_cast<int>(minor), static_cast<int>(rows)));
        });
  m.def(
      "attention(Tensor q, Tensor k, Tensor v, int layout, bool causal, float sm_scale, int pv_path, "
      "int q_granularity, int k_granularity, bool smooth_k, bool return_lse) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(sageattention, CUDA, m) { m.impl("attention", &attention_cuda); }
