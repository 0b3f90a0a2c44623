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

std::tuple<Tensor, Tensor> attention_cuda(Tensor q, Tensor k, Tensor v, std::int64_t layout,
                                          bool causal, double sm_scale, std::int64_t pv_path,
                                          std::int64_t q_granularity, std::int64_t k_granularity,
                                          bool smooth_k, bool return_lse) {
  // The Python layer validates and explains; these checks only guard the C++ entry point.
  STD_TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(),
                  "sageattention: q, k, v must be CUDA tensors");
  STD_TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
                  "sageattention: q, k, v must be 4-D");
  const ScalarType dtype = q.scalar_type();
  STD_TORCH_CHECK(dtype == k.scalar_type() && dtype == v.scalar_type() &&
                      (dtype == ScalarType::Half || dtype == ScalarType::BFloat16),
                  "sageattention: q, k, v must all be float16 or all bfloat16");
  const std::int32_t device = q.get_device_index();
  const torch::stable::accelerator::DeviceGuard guard(device);
  sageattn::Params p = sageattention::attention_params(
      q, k, v, dtype == ScalarType::Half ? sageattn::DType::f16 : sageattn::DType::bf16, layout,
      causal, sm_scale, pv_path, q_granularity, k_granularity, smooth_k);
  Tensor o = torch::stable::empty_like(q);
  const std::vector<std::int64_t> lse_shape =
      return_lse ? std::vector<std::int64_t>{q.size(0), p.heads_q, p.qo_len}
                 : std::vector<std::int64_t>{0};
  Tensor lse = torch::stable::new_empty(q, lse_shape, ScalarType::Float);
  p.o = sageattention::tensor_view(o, layout == sageattention::kLayoutHnd);
  p.lse = return_lse ? static_cast<float*>(lse.data_ptr()) : nullptr;
  const std::size_t bytes = sageattn::workspace_bytes(p);
  // From torch's caching allocator: cheap per call, and legal during CUDA graph capture.
  Tensor workspace =
      torch::stable::new_empty(q, {static_cast<std::int64_t>(bytes)}, ScalarType::Byte);
  const sageattn::Status status =
      sageattn::forward(p, workspace.data_ptr(), bytes, current_stream(device));
  STD_TORCH_CHECK(status.ok, status.message);
  return {o, lse};
}

bool has_sm90a() {
  return sageattn::has_sm90a();
}

std::int64_t default_pv_path(std::int64_t major, std::int64_t minor, std::int64_t qo_len) {
  return sageattention::default_pv_path_number(major, minor, qo_len);
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
}
