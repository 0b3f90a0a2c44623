// The host side of the kernel library: validation with messages a user can act on, the
// workspace size, and dispatch to the quantization kernels and the attention instantiation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <limits>
#include <string>
#include <type_traits>

#include "common/attention_launch.h"
#include "common/workspace.h"
#include "quantize/quantize.h"
#include "sageattn/sageattn.h"

namespace sageattn {
namespace {

std::string describe(const char* what, const TensorView& t) {
  return std::string(what) + " (strides " + std::to_string(t.stride_batch) + ", " +
         std::to_string(t.stride_head) + ", " + std::to_string(t.stride_seq) + ")";
}

Status check_view(const char* name, const TensorView& t) {
  if (t.data == nullptr) return Status::error(std::string("sageattn: ") + name + " is null");
  if (reinterpret_cast<std::uintptr_t>(t.data) % 16 != 0) {
    return Status::error(std::string("sageattn: ") + name +
                         " must be 16-byte aligned (pass a contiguous tensor)");
  }
  // 16-byte vector loads of rows (and the epilogue's 16-byte stores into O): every row must
  // start on a 16-byte boundary.
  if (t.stride_batch % 8 || t.stride_head % 8 || t.stride_seq % 8) {
    return Status::error("sageattn: " + describe(name, t) +
                         " must be multiples of 8 elements; make the tensor contiguous");
  }
  return Status::success();
}

const char* path_name(PvPath path) {
  switch (path) {
    case PvPath::fp16:
      return "fp16";
    case PvPath::fp8:
      return "fp8";
    case PvPath::fp8_sm90:
      return "fp8_sm90";
    case PvPath::fp16_sm90:
      return "fp16_sm90";
  }
  return "unknown";
}

Status check_device(const Params& p) {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    return Status::error("sageattn: no usable CUDA device");
  }
  const std::string capability = std::to_string(major) + "." + std::to_string(minor);
  const std::string name = path_name(p.pv_path);
  switch (capability_gap(p.pv_path, major, minor, has_sm90a())) {
    case CapabilityGap::none:
      break;
    case CapabilityGap::below_sm80:
      return Status::error("sageattn: compute capability " + capability +
                           " is not supported; sageattn needs 8.0 or newer");
    case CapabilityGap::fp8_needs_sm89:
      return Status::error(
          "sageattn: the fp8 P·V path needs compute capability 8.9 or newer; this GPU is " +
          capability + " (use the fp16 path)");
    case CapabilityGap::hopper_only:
      return Status::error("sageattn: the " + name +
                           " path runs on Hopper (compute capability 9.0) only; this GPU is " +
                           capability + " (use the fp8 or fp16 path)");
    case CapabilityGap::no_sm90a_code:
      return Status::error("sageattn: the " + name +
                           " path needs a library built for sm_90a (add 9.0a to "
                           "SAGEATTN_ARCH_LIST); this one was built for " +
                           compiled_architectures());
  }
  return Status::success();
}

template <int D, PvPath PATH>
cudaError_t launch_for(const detail::AttentionArgs& args, int batch, const Params& p,
                       cudaStream_t s) {
  if (PATH == PvPath::fp8 || p.dtype == DType::f16) {
    return detail::launch_attention<D, PATH, half>(args, batch, s);
  }
  return detail::launch_attention<D, PATH, __nv_bfloat16>(args, batch, s);
}

// The Hopper kernel of P·V type PvT at the call's head dim.
template <typename PvT>
cudaError_t launch_sm90_for(const detail::AttentionArgs& a, int batch, const Params& p,
                            cudaStream_t stream) {
  if (p.head_dim == 64) return detail::launch_attention_sm90<64, PvT>(a, batch, stream);
  if constexpr (!std::is_same_v<PvT, __nv_fp8_e4m3>) {  // kFp8PvMaxHeadDim
    if (p.head_dim == 96) return detail::launch_attention_sm90<96, PvT>(a, batch, stream);
    if (p.head_dim == 192) return detail::launch_attention_sm90<192, PvT>(a, batch, stream);
    if (p.head_dim == 256) return detail::launch_attention_sm90<256, PvT>(a, batch, stream);
  }
  return detail::launch_attention_sm90<128, PvT>(a, batch, stream);
}

// The attention kernel of the call's path, head dim and type, over `batch` batches of `a`
// (validate() has checked that the path takes the head dim).
cudaError_t launch_path(const detail::AttentionArgs& a, int batch, const Params& p,
                        cudaStream_t stream) {
  const bool d64 = p.head_dim == 64;
  switch (p.pv_path) {
    case PvPath::fp8_sm90:
      return launch_sm90_for<__nv_fp8_e4m3>(a, batch, p, stream);
    case PvPath::fp16_sm90:
      return p.dtype == DType::f16 ? launch_sm90_for<half>(a, batch, p, stream)
                                   : launch_sm90_for<__nv_bfloat16>(a, batch, p, stream);
    case PvPath::fp8:
      return d64 ? launch_for<64, PvPath::fp8>(a, batch, p, stream)
                 : launch_for<128, PvPath::fp8>(a, batch, p, stream);
    case PvPath::fp16:
      break;
  }
  if (p.head_dim == 256) return launch_for<256, PvPath::fp16>(a, batch, p, stream);
  return d64 ? launch_for<64, PvPath::fp16>(a, batch, p, stream)
             : launch_for<128, PvPath::fp16>(a, batch, p, stream);
}

// The sharp-tile kernel at the call's head dim and type (sharp_redo.cuh).
template <typename T>
cudaError_t launch_sharp_for(const detail::AttentionArgs& a, int sms, bool programmatic,
                             int head_dim, cudaStream_t stream) {
  switch (head_dim) {
    case 64:
      return detail::launch_sharp_redo<64, T>(a, sms, programmatic, stream);
    case 96:
      return detail::launch_sharp_redo<96, T>(a, sms, programmatic, stream);
    case 192:
      return detail::launch_sharp_redo<192, T>(a, sms, programmatic, stream);
    case 256:
      return detail::launch_sharp_redo<256, T>(a, sms, programmatic, stream);
    default:
      return detail::launch_sharp_redo<128, T>(a, sms, programmatic, stream);
  }
}

// After the attention launches: the tiles they flagged, again with 16-bit Q·Kᵀ. As many CTAs as
// fit on the GPU walk the list, however long it turned out; on ordinary inputs they find it
// empty. On compute capability 9.0+ the kernel is a programmatic dependent launch,
// which halves what the guard costs there (kernels/NOTES.md, sharp-pdl).
cudaError_t redo_sharp_tiles(const detail::AttentionArgs& a, const Params& p, cudaStream_t stream) {
  int device = 0, sms = 0, major = 0;
  if (cudaError_t e = cudaGetDevice(&device)) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) {
    return e;
  }
  if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) {
    return e;
  }
  const bool programmatic = major >= 9;
  return p.dtype == DType::f16
             ? launch_sharp_for<half>(a, sms, programmatic, p.head_dim, stream)
             : launch_sharp_for<__nv_bfloat16>(a, sms, programmatic, p.head_dim, stream);
}

}  // namespace

Status validate(const Params& p) {
  if (static_cast<int>(p.pv_path) < 0 ||
      static_cast<int>(p.pv_path) > static_cast<int>(PvPath::fp16_sm90)) {
    return Status::error("sageattn: unknown P·V path number " +
                         std::to_string(static_cast<int>(p.pv_path)) +
                         "; known: 0 fp16, 1 fp8, 2 fp8_sm90, 3 fp16_sm90");
  }
  if (!is_supported_head_dim(p.head_dim)) {
    return Status::error(
        "sageattn: head_dim " + std::to_string(p.head_dim) +
        " not supported; supported: 64, 96, 128, 192, 256 (pad others up to the next)");
  }
  if (!path_supports_head_dim(p.pv_path, p.head_dim)) {
    const std::string name = path_name(p.pv_path), d = std::to_string(p.head_dim);
    const std::string padded = std::to_string(p.head_dim < 128 ? 128 : 256);
    if (is_hopper_only_head_dim(p.head_dim) && !uses_fp8_v(p.pv_path)) {
      return Status::error("sageattn: the " + name + " path takes head dims 64, 128 and 256; pad " +
                           d + " to " + padded +
                           " (the fp16_sm90 path, on Hopper, takes it as it is)");
    }
    if (p.head_dim < kFp8PvMaxHeadDim) {  // 96: a Hopper-only dim below FP8's limit
      return Status::error("sageattn: the " + name + " path takes head dims 64 and 128; pad " + d +
                           " to 128");
    }
    std::string instead = "the fp16 path";
    if (is_sm90_path(p.pv_path)) {
      instead = "the fp16_sm90 path";
    } else if (is_hopper_only_head_dim(p.head_dim)) {
      instead = "the fp16_sm90 path on Hopper, or padded to " + padded + " the fp16 path";
    }
    return Status::error("sageattn: the " + name + " path takes head dims up to " +
                         std::to_string(kFp8PvMaxHeadDim) + "; head_dim " + d + " runs on " +
                         instead + " (16-bit P·V)");
  }
  if (p.batch < 1 || p.heads_q < 1 || p.heads_kv < 1 || p.qo_len < 1 || p.kv_len < 1) {
    return Status::error(
        "sageattn: batch, heads and sequence lengths must be at least 1 (got batch " +
        std::to_string(p.batch) + ", heads " + std::to_string(p.heads_q) + "/" +
        std::to_string(p.heads_kv) + ", lengths " + std::to_string(p.qo_len) + "/" +
        std::to_string(p.kv_len) + ")");
  }
  if (p.heads_q > kMaxQueryHeads) {
    return Status::error("sageattn: " + std::to_string(p.heads_q) +
                         " query heads; one call takes at most " + std::to_string(kMaxQueryHeads) +
                         " (the kernels' grid holds them in its y dimension): split the heads "
                         "into several calls");
  }
  if (p.heads_q % p.heads_kv != 0) {
    return Status::error("sageattn: query heads (" + std::to_string(p.heads_q) +
                         ") must be a multiple of key/value heads (" + std::to_string(p.heads_kv) +
                         ")");
  }
  for (const auto& [name, view] :
       {std::pair{"q", p.q}, std::pair{"k", p.k}, std::pair{"v", p.v}, std::pair{"o", p.o}}) {
    if (Status s = check_view(name, view); !s.ok) return s;
  }
  if (Status s = detail::check_varlen(p); !s.ok) return s;
  if (!(p.sm_scale >= 0.f) || !std::isfinite(p.sm_scale)) {
    return Status::error(
        "sageattn: sm_scale must be a finite non-negative number (0 = 1/sqrt(head_dim))");
  }
  if (std::isnan(p.sharp_threshold) || p.sharp_threshold < 0.f) {
    return Status::error(
        "sageattn: sharp_threshold must be a non-negative number of logits (0 or infinity: no "
        "sharp-tile guard)");
  }
  if (p.guards_sharp_tiles() &&
      detail::sharp_tile_capacity(p) > std::numeric_limits<std::int32_t>::max()) {
    return Status::error("sageattn: " + std::to_string(detail::sharp_tile_capacity(p)) +
                         " query tiles in one call; the sharp-tile guard lists at most " +
                         std::to_string(std::numeric_limits<std::int32_t>::max()) +
                         ": split the batch, or pass sharp_threshold 0");
  }
  return check_device(p);
}

std::size_t workspace_bytes(const Params& p) {
  return detail::layout_workspace(p, nullptr).total;
}

namespace {

struct Prepared {
  Status status;
  detail::Workspace workspace;
  float sm_scale = 0.f;
};

Prepared prepare(const Params& p, void* workspace, std::size_t workspace_size) {
  Prepared r;
  r.status = validate(p);
  if (!r.status.ok) return r;
  r.workspace = detail::layout_workspace(p, workspace);
  if (workspace == nullptr || workspace_size < r.workspace.total) {
    r.status =
        Status::error("sageattn: workspace of " + std::to_string(workspace_size) + " bytes; " +
                      std::to_string(r.workspace.total) + " needed (workspace_bytes())");
  }
  r.sm_scale = p.sm_scale > 0.f ? p.sm_scale : 1.f / std::sqrt(static_cast<float>(p.head_dim));
  return r;
}

}  // namespace

Status quantize(const Params& p, void* workspace, std::size_t workspace_size, cudaStream_t stream) {
  const Prepared r = prepare(p, workspace, workspace_size);
  if (!r.status.ok) return r.status;
  if (cudaError_t e = detail::quantize_inputs(p, r.workspace, stream)) {
    return Status::error(std::string("sageattn: quantization kernels failed: ") +
                         cudaGetErrorString(e));
  }
  return Status::success();
}

Status attention(const Params& p, void* workspace, std::size_t workspace_size,
                 cudaStream_t stream) {
  const Prepared r = prepare(p, workspace, workspace_size);
  if (!r.status.ok) return r.status;
  const detail::Workspace& w = r.workspace;
  const detail::AttentionArgs a = detail::attention_args(p, w, r.sm_scale);
  // Batches beyond the grid's limit go in further launches, each over a slice of them.
  cudaError_t e = cudaSuccess;
  for (int first = 0; first < p.batch && e == cudaSuccess; first += detail::kMaxGridBatch) {
    const int batches = std::min(detail::kMaxGridBatch, p.batch - first);
    e = launch_path(detail::batch_slice(a, first, p.head_dim), batches, p, stream);
  }
  if (e == cudaSuccess && a.sharp_count != nullptr) e = redo_sharp_tiles(a, p, stream);
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
    return Status::error(
        std::string("sageattn: this library has no kernel for this GPU; it was built for ") +
        compiled_architectures());
  }
  if (e == cudaErrorNotSupported && is_sm90_path(p.pv_path)) {
    return Status::error(std::string("sageattn: the ") + path_name(p.pv_path) +
                         " path could not describe its tiles to the copy engine "
                         "(cuTensorMapEncodeTiled is missing or refused them; a CUDA 12.0+ "
                         "driver is needed)");
  }
  if (e != cudaSuccess) {
    return Status::error(std::string("sageattn: attention kernel launch failed: ") +
                         cudaGetErrorString(e));
  }
  return Status::success();
}

Status forward(const Params& p, void* workspace, std::size_t workspace_size, cudaStream_t stream) {
  if (Status s = quantize(p, workspace, workspace_size, stream); !s.ok) return s;
  return attention(p, workspace, workspace_size, stream);
}

PvPath default_pv_path(int major, int minor, int qo_len, int head_dim) {
  return pv_path_for(major, minor, has_sm90a(), qo_len, head_dim);
}

const char* compiled_architectures() {
  return SAGEATTN_ARCHITECTURES;
}

bool has_sm90a() {
  // A compile-time list; validate() asks on every call.
  static const bool found =
      (std::string(" ") + SAGEATTN_ARCHITECTURES + " ").find(" 90a ") != std::string::npos;
  return found;
}

}  // namespace sageattn
