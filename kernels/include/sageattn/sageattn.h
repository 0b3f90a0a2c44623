// SageAttention kernels: the plain C++ boundary. No torch and no Python headers: a parameter
// struct of device pointers, shapes and strides, and functions that take a cudaStream_t and
// return a Status. Compiled once per (CUDA version, arch list, source) and linked into every
// wheel of that CUDA version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <limits>
#include <string>

#include "sageattn/manifest.h"

namespace sageattn {

// The types, paths, granularities, head dims and limits: sageattn/manifest.h, generated from
// kernels/manifest.py, with what each path is and uses (path_name, uses_fp8_v, is_sm90_path,
// path_supports_head_dim). The rules over them follow.

// A [batch, heads, seq, head_dim] view with arbitrary batch/head/sequence strides (in
// elements); the head_dim axis must be contiguous. HND and NHD layouts are both such views.
struct TensorView {
  const void* data = nullptr;
  std::int64_t stride_batch = 0;
  std::int64_t stride_head = 0;
  std::int64_t stride_seq = 0;
};

// Variable-length (packed) batches, as FlashAttention's varlen functions take them: the
// sequences lie one after another along the sequence axis of q, k, v and o (their views'
// stride_batch is not used), sequence b's queries at rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1]
// - 1 of q and o, its keys at rows cu_seqlens_k[b] .. of k and v. Each sequence is attended on
// its own: K's smoothing mean, V's FP8 scales and the causal diagonal (bottom-right) are its own.
// Params::qo_len and kv_len are then the longest sequences' lengths (max_seqlen_q and _k), which
// size the grids and the workspace. The kernels clamp every row they touch into [0, total): a
// sequence longer than those bounds, or offsets that decrease or leave the tensors, cannot make
// them read or write outside q, k, v, o and the workspace, and that sequence's output rows come
// out as NaN (those past the bounds are not written at all).
struct Varlen {
  const std::int32_t* cu_seqlens_q = nullptr;  // device, batch + 1 values from 0, or null
  const std::int32_t* cu_seqlens_k = nullptr;  // device, batch + 1 values from 0, or null
  int total_q = 0;                             // rows of q and o
  int total_k = 0;                             // rows of k and v
};

// Whether an accumulation can overflow on some finite inputs: FP16 block sums of 16-bit P·V.
// P ≤ 1 there (the exact row max is subtracted), so a 64-key block's sum leaves FP16's range
// only where |v| reaches 1,024, and V is the caller's, unscaled. The attention kernel lists a
// tile whose O came out non-finite for the sharp-tile kernel, which computes it again with FP32
// sums. (On the FP8 paths V's scale bounds the block's sum: fp8_v_max.)
constexpr bool accumulation_may_overflow(PvPath path, PvAccum accumulation) {
  return accumulation == PvAccum::fp16_block && !uses_fp8_v(path);
}

struct Params {
  DType dtype = DType::f16;  // of q, k, v and o
  int batch = 0;             // any (more than 65,535 run as several launches); varlen: sequences
  int heads_q = 0;           // at most 65,535 (a grid dimension of the kernels): split larger calls
  int heads_kv = 0;          // heads_q must be a multiple (GQA/MQA)
  int qo_len = 0;            // varlen: the longest sequence's queries (max_seqlen_q)
  int kv_len = 0;            // varlen: the longest sequence's keys (max_seqlen_k)
  int head_dim = 0;  // kSupportedHeadDims, as the path takes it (others are padded by the caller)
  TensorView q, k, v;
  TensorView o;  // written; o.data must be writable
  // Optional natural-log sum-exp per query row, contiguous: [batch, heads_q, qo_len], or for
  // varlen calls [heads_q, total_q] (FlashAttention's varlen layout).
  float* lse = nullptr;
  bool causal = false;   // bottom-right aligned: query i sees keys j <= i + kv_len - qo_len
  float sm_scale = 0.f;  // 0: 1/sqrt(head_dim)
  PvPath pv_path = PvPath::fp8;
  // How P·V is summed: one of the path's (accumulation_name says which it has).
  PvAccum pv_accum = PvAccum::fp32;
  Granularity q_granularity = Granularity::per_warp;
  Granularity k_granularity = Granularity::per_block;
  bool smooth_k = true;  // subtract K's per-head mean over the sequence before quantizing
  Varlen varlen;         // set both cu_seqlens for a packed batch of sequences
  // The sharp-tile guard: a 64-row query tile in which some row's largest logit (sm_scale·q·k,
  // after K's smoothing: its distance from the row's mean logit) exceeds this is computed again
  // with 16-bit Q·Kᵀ (fp16 or bf16 products, FP32 sums) and 16-bit P·V, where INT8 Q·Kᵀ would
  // lose the winning keys (docs/kernels.md, "Sharp attention"). 0 or infinity: no guard.
  float sharp_threshold = kDefaultSharpThreshold;  // (manifest.h)

  bool is_varlen() const { return varlen.cu_seqlens_q != nullptr; }
  bool guards_sharp_tiles() const {
    return sharp_threshold > 0.f && sharp_threshold <= std::numeric_limits<float>::max();
  }
  // Whether the call keeps the sharp-tile kernel's worklist: for the guard, or for the tiles
  // whose accumulation overflowed (accumulation_may_overflow), which that kernel computes again.
  bool redoes_tiles() const {
    return guards_sharp_tiles() || accumulation_may_overflow(pv_path, pv_accum);
  }
};

struct Status {
  bool ok = true;
  std::string message;  // "sageattn: head_dim 96 not supported; supported: 64, 128, 192, 256"
  static Status success() { return {}; }
  static Status error(std::string text) { return {false, std::move(text)}; }
};

// Checks shapes, strides, pointers and the GPU's capability; the message says what to change.
Status validate(const Params& params);

// Device memory the quantized copies of Q, K, V and their scales need.
std::size_t workspace_bytes(const Params& params);

// Quantizes Q, K, V into `workspace` and runs attention, all on `stream`.
Status forward(const Params& params, void* workspace, std::size_t workspace_size,
               cudaStream_t stream);

// The two halves of forward(), for callers that time or reuse them separately: quantize()
// fills the workspace with K's and V's quantized copies, attention() reads them (same params,
// same workspace) and quantizes Q itself, from params.q, as it reads it.
Status quantize(const Params& params, void* workspace, std::size_t workspace_size,
                cudaStream_t stream);
Status attention(const Params& params, void* workspace, std::size_t workspace_size,
                 cudaStream_t stream);

// kHopperPv16MaxQueryLen (manifest.h): up to this many query rows Hopper takes the 16-bit P·V
// wgmma kernel (fp16_sm90) rather than the FP8 one, which misses the rel-L1 bar there
// (docs/kernels.md). kFp8PvMaxHeadDim: the FP8 P·V paths' second-level accumulator (a block's
// P·V in FP32 beside O) does not fit a thread's registers beside O above it. kHopperOnlyHeadDims:
// the mma.sync kernels' 96- and 192-byte INT8 rows fit neither their swizzle nor their copy
// passes; callers pad them to 128 and 256 there.
constexpr bool is_supported_head_dim(int head_dim) {
  for (int d : kSupportedHeadDims) {
    if (d == head_dim) return true;
  }
  return false;
}

constexpr bool is_hopper_only_head_dim(int head_dim) {
  for (int d : kHopperOnlyHeadDims) {
    if (d == head_dim) return true;
  }
  return false;
}

// The path for a compute capability and a query length (≤ 0: not known), given whether the
// library has sm_90a code. Hopper with sm_90a: the wgmma kernel, fp16_sm90 up to
// kHopperPv16MaxQueryLen query rows, else fp8_sm90. Hopper without it: mma.sync, where nvcc 13.0
// lowers e4m3 mma.sync to an f16 unpack plus HMMA (SASS: F2FP.F16.E4M3.UNPACK_B, HMMA.16816), so
// the 16-bit path is faster and more accurate. FP8 mma.sync where the GPU has native e4m3 tensor
// instructions (fp8_mma_native, manifest.h: QMMA on Ada sm89, Blackwell sm100+). sm80 has no FP8.
// Head dims above kFp8PvMaxHeadDim take the 16-bit P·V path of the same kernel (head_dim ≤ 0:
// not known, as 128).
constexpr PvPath pv_path_for(int major, int minor, bool has_sm90a, int qo_len, int head_dim = 0) {
  const int cc = major * 10 + minor;
  const bool pv16_only = head_dim > kFp8PvMaxHeadDim;
  if (cc == 90 && has_sm90a) {
    return pv16_only || (qo_len > 0 && qo_len <= kHopperPv16MaxQueryLen) ? PvPath::fp16_sm90
                                                                         : PvPath::fp8_sm90;
  }
  return fp8_mma_native(major, minor) && !pv16_only ? PvPath::fp8 : PvPath::fp16;
}

// capability_gap (manifest.h, generated) is why a path cannot run on a GPU: the rule behind
// validate()'s refusals, written from the manifest's facts into the Python package too
// (_manifest.capability_gap); its CPU tests compare the two through the binding's op.

// The path sageattn picks: pv_path_for with this library's has_sm90a() (qo_len ≤ 0 when the
// query length is not known: fp8_sm90 on Hopper, as for long queries).
PvPath default_pv_path(int major, int minor, int qo_len = 0, int head_dim = 0);

// The CUDA architectures this library was compiled for, as "80 89 90a".
const char* compiled_architectures();

// Whether compiled_architectures() includes sm_90a (the fp8_sm90 path's only target).
bool has_sm90a();

}  // namespace sageattn
