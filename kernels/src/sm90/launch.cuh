// The Hopper kernel's host side: the tensor maps of K and V (cuTensorMapEncodeTiled, from the
// driver the runtime loaded), the launch of one kernel instantiation, and the choice of two,
// three or four consumer warpgroups by the tile policy.
#pragma once

#include <cstdint>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "attention_sm90.cuh"

namespace sageattn::detail {

// cuTensorMapEncodeTiled from the driver the runtime loaded, without linking libcuda.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    const cudaError_t asked = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                               cudaEnableDefault, &found);
#else
    // CUDA 12.0-12.4 have no ByVersion query; the symbol has one ABI version (12000) anyway.
    const cudaError_t asked =
        cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found);
#endif
    if (asked != cudaSuccess || found != cudaDriverEntryPointSuccess) {
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A byte tensor [outer][rows][inner], contiguous, read in boxes of box_rows × box_inner.
inline bool encode_byte_tensor(CUtensorMap* map, const void* base, std::uint64_t inner,
                               std::uint64_t rows, std::uint64_t outer, unsigned box_inner,
                               unsigned box_rows, int swizzle_bytes) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {inner, rows, outer};
  const cuuint64_t strides[2] = {inner, inner * rows};  // bytes, of dims 1 and 2
  const cuuint32_t box[3] = {box_inner, box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUtensorMapSwizzle swizzle = swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                           : CU_TENSOR_MAP_SWIZZLE_32B;
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(base), dims, strides, box,
                element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The caller's 16-bit V [batch][heads_kv][kv_len][D] with its own strides (elements; D
// contiguous), read in boxes of 64 channels × `box_keys` keys with 128-byte swizzle. Keys past
// kv_len arrive as zeros. A varlen call's V is one batch of total_k rows: keys past a sequence's
// end are the next sequence's, which the softmax gives a weight of exactly 0.
inline bool encode_v16_tensor(CUtensorMap* map, const AttentionArgs& a, int batch, int d,
                              unsigned box_keys) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const bool varlen = a.cu_k != nullptr;
  const cuuint64_t rows = static_cast<cuuint64_t>(varlen ? a.total_k : a.kv_len);
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(d), rows, static_cast<cuuint64_t>(a.heads_kv),
                              static_cast<cuuint64_t>(varlen ? 1 : batch)};
  // (A varlen map's one batch needs a stride all the same: any valid one.)
  const cuuint64_t batch_stride = varlen ? rows * a.v_ss : static_cast<cuuint64_t>(a.v_sb);
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(a.v_ss) * 2,
                                 static_cast<cuuint64_t>(a.v_sh) * 2,
                                 batch_stride * 2};  // bytes, of dims 1-3
  const cuuint32_t box[4] = {64, box_keys, 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, const_cast<void*>(a.v), dims, strides, box,
                element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int D, typename PvT, int kConsumers, bool kVarlen>
cudaError_t launch_sm90_kernel_as(const AttentionArgs& a, int batch, cudaStream_t stream) {
  using Cfg = Sm90Config<D, PvT, kConsumers>;
  Sm90Args args{};
  args.a = a;
  // The workspace's units of this launch (workspace.h): (batch, KV head) pairs, or the KV heads
  // of a varlen call.
  const std::uint64_t units = a.unit_batch_stride == 0
                                  ? static_cast<std::uint64_t>(a.heads_kv)
                                  : static_cast<std::uint64_t>(batch) * a.unit_batch_stride;
  bool encoded = encode_byte_tensor(&args.k_map, a.k, D, a.unit_rows, units, Cfg::kQKBoxBytes,
                                    Cfg::kBlockN, Cfg::kQKSwizzle);
  if constexpr (Cfg::kPv8) {
    encoded = encoded && encode_byte_tensor(&args.v_map, a.v_fp8, a.unit_rows, D, units,
                                            Cfg::kBlockN, D, Cfg::kVSwizzle);
  } else {
    encoded = encoded && encode_v16_tensor(&args.v_map, a, batch, D, Cfg::kBlockN);
  }
  if (!encoded) return cudaErrorNotSupported;
  auto kernel = attention_sm90_kernel<D, PvT, kConsumers, kVarlen>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Cfg::kSmemBytes)) {
    return e;
  }
  const dim3 grid((a.q_pad + Cfg::kBlockM - 1) / Cfg::kBlockM, a.heads_q, batch);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
#if SAGEATTN_SM90_TRACE
  sm90_trace_print<D><<<1, 1, 0, stream>>>(static_cast<int>(grid.x * grid.y * grid.z));
#endif
  return cudaGetLastError();
}

// The dense or the varlen instantiation (attention_sequence.cuh).
template <int D, typename PvT, int kConsumers>
cudaError_t launch_sm90_kernel(const AttentionArgs& a, int batch, cudaStream_t stream) {
  if (a.cu_q != nullptr) return launch_sm90_kernel_as<D, PvT, kConsumers, true>(a, batch, stream);
  return launch_sm90_kernel_as<D, PvT, kConsumers, false>(a, batch, stream);
}

// Two, three or four consumer warpgroups, by tile_policy.h's rule (which the host reference
// follows).
template <int D, typename PvT>
cudaError_t launch_attention_sm90(const AttentionArgs& a, int batch, cudaStream_t stream) {
  // A head dim SAGEATTN_HEAD_DIMS left out (common/attention_launch.h): no kernel compiled.
  if constexpr (kHeadDimLeftOut) {
    return cudaErrorNotSupported;
  } else {
    constexpr bool kPv8 = std::is_same_v<PvT, __nv_fp8_e4m3>;
    constexpr int kForced = sm90_forced_consumers(D);
    // Only the shapes the rule can pick are built.
    if constexpr (sm90_has_tile(D, kPv8, 3) && kForced != 2) {
      const PvPath path = kPv8 ? PvPath::fp8_sm90 : PvPath::fp16_sm90;
      const int consumers =
          sm90_consumer_warpgroups(D, path, a.mask == KeyMask::Kind::causal_bottom_right, a.qo_len);
      if constexpr (sm90_has_tile(D, kPv8, 4) && (kForced == 0 || kForced == 4)) {
        if (consumers == 4) return launch_sm90_kernel<D, PvT, 4>(a, batch, stream);
      }
      if (consumers == 3) return launch_sm90_kernel<D, PvT, 3>(a, batch, stream);
    }
    return launch_sm90_kernel<D, PvT, 2>(a, batch, stream);
  }
}

}  // namespace sageattn::detail
