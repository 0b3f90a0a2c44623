// The torch binding on torch's stable C ABI (torch/csrc/stable), built for one torch release, the
// stable ABI target (TORCH_TARGET_VERSION, set by CMakeLists.txt from SAGEATTN_TORCH_ABI_TARGET):
// the library then loads in that torch and every later one, with any Python, so one wheel per
// CUDA major serves them all (docs/build.md, "Universal wheels"). It registers the same operators
// as binding.cpp, which stays for torch releases without the stable ABI.
//
// What crosses into torch is C only: tensor handles, the dispatcher's boxed calling convention,
// and the shim's functions (aoti_torch_*, torch_*). No C++ type of torch's is shared, so this
// library may carry its own C++ runtime and CUDA runtime (both linked statically) and needs
// only libtorch_cpu.so and libtorch_cuda.so, by name, from whatever torch loads it.
#include <cstdint>
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <tuple>
#include <vector>

#include "attention_params.h"

namespace {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

cudaStream_t current_stream(std::int32_t device) {
  void* stream = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(device, &stream));
  return static_cast<cudaStream_t>(stream);
}

// The Python layer validates and explains; these checks only guard the C++ entry point.
sageattn::DType checked_dtype(const Tensor& q, const Tensor& k, const Tensor& v,
                              std::int64_t dims) {
  STD_TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(),
                  "sageattention: q, k, v must be CUDA tensors");
  STD_TORCH_CHECK(q.dim() == dims && k.dim() == dims && v.dim() == dims,
                  "sageattention: q, k, v must be ", dims, "-D");
  const ScalarType dtype = q.scalar_type();
  STD_TORCH_CHECK(dtype == k.scalar_type() && dtype == v.scalar_type() &&
                      (dtype == ScalarType::Half || dtype == ScalarType::BFloat16),
                  "sageattention: q, k, v must all be float16 or all bfloat16");
  return dtype == ScalarType::Half ? sageattn::DType::f16 : sageattn::DType::bf16;
}

// Runs the call `p` (its o and lse set) with a workspace from torch's caching allocator: cheap
// per call, and legal during CUDA graph capture.
void run(const sageattn::Params& p, const Tensor& q, std::int32_t device) {
  const std::size_t bytes = sageattn::workspace_bytes(p);
  Tensor workspace =
      torch::stable::new_empty(q, {static_cast<std::int64_t>(bytes)}, ScalarType::Byte);
  const sageattn::Status status =
      sageattn::forward(p, workspace.data_ptr(), bytes, current_stream(device));
  STD_TORCH_CHECK(status.ok, status.message);
}

Tensor float_tensor(const Tensor& like, bool wanted, std::vector<std::int64_t> shape) {
  return torch::stable::new_empty(like, wanted ? shape : std::vector<std::int64_t>{0},
                                  ScalarType::Float);
}

std::tuple<Tensor, Tensor> attention_cuda(Tensor q, Tensor k, Tensor v, std::int64_t layout,
                                          bool causal, double sm_scale, std::int64_t pv_path,
                                          std::int64_t pv_accum, std::int64_t q_granularity,
                                          std::int64_t k_granularity, bool smooth_k,
                                          double sharp_threshold, bool return_lse) {
  const sageattn::DType dtype = checked_dtype(q, k, v, 4);
  const std::int32_t device = q.get_device_index();
  const torch::stable::accelerator::DeviceGuard guard(device);
  sageattn::Params p =
      sageattention::attention_params(q, k, v, layout,
                                      {dtype, causal, sm_scale, pv_path, pv_accum, q_granularity,
                                       k_granularity, smooth_k, sharp_threshold});
  Tensor o = torch::stable::empty_like(q);
  Tensor lse = float_tensor(q, return_lse, {q.size(0), p.heads_q, p.qo_len});
  p.o = sageattention::tensor_view(o, layout == sageattention::kLayoutHnd);
  p.lse = return_lse ? static_cast<float*>(lse.data_ptr()) : nullptr;
  run(p, q, device);
  return {o, lse};
}

std::tuple<Tensor, Tensor> attention_varlen_cuda(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q,
                                                 Tensor cu_seqlens_k, std::int64_t max_seqlen_q,
                                                 std::int64_t max_seqlen_k, bool causal,
                                                 double sm_scale, std::int64_t pv_path,
                                                 std::int64_t pv_accum, std::int64_t q_granularity,
                                                 std::int64_t k_granularity, bool smooth_k,
                                                 double sharp_threshold, bool return_lse) {
  const sageattn::DType dtype = checked_dtype(q, k, v, 3);
  for (const Tensor* cu : {&cu_seqlens_q, &cu_seqlens_k}) {
    STD_TORCH_CHECK(cu->is_cuda() && cu->scalar_type() == ScalarType::Int && cu->dim() == 1 &&
                        cu->is_contiguous() && cu->size(0) == cu_seqlens_q.size(0) &&
                        cu->size(0) >= 2,
                    "sageattention: cu_seqlens_q and cu_seqlens_k must be contiguous int32 CUDA "
                    "tensors of one length (sequences + 1)");
  }
  STD_TORCH_CHECK(max_seqlen_q >= 1 && max_seqlen_k >= 1 && max_seqlen_q <= INT32_MAX &&
                      max_seqlen_k <= INT32_MAX,
                  "sageattention: max_seqlen_q and max_seqlen_k must be between 1 and 2^31 - 1");
  const std::int32_t device = q.get_device_index();
  const torch::stable::accelerator::DeviceGuard guard(device);
  sageattn::Params p = sageattention::varlen_attention_params(
      q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
      {dtype, causal, sm_scale, pv_path, pv_accum, q_granularity, k_granularity, smooth_k,
       sharp_threshold});
  Tensor o = torch::stable::empty_like(q);
  Tensor lse = float_tensor(q, return_lse, {p.heads_q, q.size(0)});
  p.o = sageattention::packed_view(o);
  p.lse = return_lse ? static_cast<float*>(lse.data_ptr()) : nullptr;
  run(p, q, device);
  return {o, lse};
}

bool has_sm90a() {
  return sageattn::has_sm90a();
}

std::int64_t default_pv_path(std::int64_t major, std::int64_t minor, std::int64_t qo_len,
                             std::int64_t head_dim) {
  return sageattention::default_pv_path_number(major, minor, qo_len, head_dim);
}

std::int64_t capability_gap(std::int64_t pv_path, std::int64_t major, std::int64_t minor,
                            bool has_sm90a) {
  return sageattention::capability_gap_number(pv_path, major, minor, has_sm90a);
}

}  // namespace

STABLE_TORCH_LIBRARY(sageattention, m) {
  m.def(sageattention::kHasSm90aSchema);
  m.def(sageattention::kDefaultPvPathSchema);
  m.def(sageattention::kCapabilityGapSchema);
  m.def(sageattention::kAttentionSchema);
  m.def(sageattention::kAttentionVarlenSchema);
}

// has_sm90a, default_pv_path and capability_gap take no tensor: CompositeExplicitAutograd serves
// every backend, the CPU-only test machines included.
STABLE_TORCH_LIBRARY_IMPL(sageattention, CompositeExplicitAutograd, m) {
  m.impl("has_sm90a", TORCH_BOX(&has_sm90a));
  m.impl("default_pv_path", TORCH_BOX(&default_pv_path));
  m.impl("capability_gap", TORCH_BOX(&capability_gap));
}

STABLE_TORCH_LIBRARY_IMPL(sageattention, CUDA, m) {
  m.impl("attention", TORCH_BOX(&attention_cuda));
  m.impl("attention_varlen", TORCH_BOX(&attention_varlen_cuda));
}
