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
#include "common/built_head_dims.h"
#include "common/workspace.h"
#include "dispatch.h"
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
  return detail::launch_sharp_instantiation(p.dtype, p.head_dim, a, sms, programmatic, stream);
}

// The head dims a path takes, as a message lists them ("64, 128 and 256").
template <class Taken>
std::string listed_head_dims(Taken taken) {
  std::string text;
  int listed = 0, count = 0;
  for (int d : kSupportedHeadDims)
    count += taken(d);
  for (int d : kSupportedHeadDims) {
    if (!taken(d)) continue;
    if (listed > 0) text += listed + 1 == count ? " and " : ", ";
    text += std::to_string(d);
    ++listed;
  }
  return text;
}

std::string head_dims_taken(PvPath path) {
  return listed_head_dims([&](int d) { return path_supports_head_dim(path, d); });
}

// The head dim a path takes that head_dim pads up to: the smallest above it (the largest the
// path takes, where none is).
int padded_head_dim(PvPath path, int head_dim) {
  int largest = 0;
  for (int d : kSupportedHeadDims) {
    if (!path_supports_head_dim(path, d)) continue;
    if (d > head_dim) return d;
    largest = d;
  }
  return largest;
}

// "0 fp16, 1 fp8, ...": every path by its number.
std::string known_paths() {
  std::string text;
  for (int i = 0; i < kPathCount; ++i)
    text += (i ? ", " : "") + std::to_string(i) + " " + path_name(static_cast<PvPath>(i));
  return text;
}

// "0 fp32+fp32, 1 fp32+fp16": the accumulations a path has, by number and name.
std::string path_accumulations(PvPath path) {
  std::string text;
  for (int i = 0; i < kAccumulationCount; ++i) {
    const char* name = accumulation_name(path, static_cast<PvAccum>(i));
    if (name != nullptr) text += (text.empty() ? "" : ", ") + std::to_string(i) + " " + name;
  }
  return text;
}

}  // namespace

Status validate(const Params& p) {
  if (static_cast<int>(p.pv_path) < 0 || static_cast<int>(p.pv_path) >= kPathCount) {
    return Status::error("sageattn: unknown P·V path number " +
                         std::to_string(static_cast<int>(p.pv_path)) + "; known: " + known_paths());
  }
  const int accumulation = static_cast<int>(p.pv_accum);
  if (accumulation < 0 || accumulation >= kAccumulationCount ||
      accumulation_name(p.pv_path, p.pv_accum) == nullptr) {
    return Status::error("sageattn: the " + std::string(path_name(p.pv_path)) +
                         " path has no P·V accumulation number " + std::to_string(accumulation) +
                         "; it has: " + path_accumulations(p.pv_path));
  }
  if (!is_supported_head_dim(p.head_dim)) {
    std::string supported;
    for (int d : kSupportedHeadDims)
      supported += (supported.empty() ? "" : ", ") + std::to_string(d);
    return Status::error("sageattn: head_dim " + std::to_string(p.head_dim) +
                         " not supported; supported: " + supported +
                         " (pad others up to the next)");
  }
  if (!detail::head_dim_built(p.head_dim)) {
    return Status::error("sageattn: head_dim " + std::to_string(p.head_dim) +
                         ": this library was built with the kernels of head dims " +
                         detail::kBuiltHeadDims +
                         " only (SAGEATTN_HEAD_DIMS); build it without that setting for every "
                         "head dim");
  }
  if (!path_supports_head_dim(p.pv_path, p.head_dim)) {
    const std::string name = path_name(p.pv_path), d = std::to_string(p.head_dim);
    const std::string padded = std::to_string(padded_head_dim(p.pv_path, p.head_dim));
    if (is_hopper_only_head_dim(p.head_dim) && !uses_fp8_v(p.pv_path)) {
      return Status::error("sageattn: the " + name + " path takes head dims " +
                           head_dims_taken(p.pv_path) + "; pad " + d + " to " + padded +
                           " (the fp16_sm90 path, on Hopper, takes it as it is)");
    }
    if (p.head_dim < kFp8PvMaxHeadDim) {  // 96: a Hopper-only dim below FP8's limit
      return Status::error("sageattn: the " + name + " path takes head dims " +
                           head_dims_taken(p.pv_path) + "; pad " + d + " to " + padded);
    }
    std::string instead = "the fp16 path";
    if (is_sm90_path(p.pv_path)) {
      instead = "the fp16_sm90 path";
    } else if (is_hopper_only_head_dim(p.head_dim)) {
      instead = "the fp16_sm90 path on Hopper, or padded to " +
                std::to_string(padded_head_dim(PvPath::fp16, p.head_dim)) + " the fp16 path";
    }
    return Status::error("sageattn: the " + name + " path takes head dims up to " +
                         std::to_string(kFp8PvMaxHeadDim) + "; head_dim " + d + " runs on " +
                         instead + " (16-bit P·V)");
  }
  if (!accumulation_supports_head_dim(p.pv_path, p.pv_accum, p.head_dim)) {
    const std::string dims = listed_head_dims(
        [&](int d) { return accumulation_supports_head_dim(p.pv_path, p.pv_accum, d); });
    return Status::error("sageattn: the " + std::string(path_name(p.pv_path)) +
                         " path sums P·V as " + accumulation_name(p.pv_path, p.pv_accum) +
                         " at head dims " + dims + ", not " + std::to_string(p.head_dim) + "; " +
                         accumulation_name(p.pv_path, PvAccum::fp32) + " takes every one");
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
  if (p.redoes_tiles() &&
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
    e = detail::launch_attention_instantiation(p.pv_path, p.pv_accum, p.dtype, p.head_dim,
                                               detail::batch_slice(a, first, p.head_dim), batches,
                                               stream);
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
