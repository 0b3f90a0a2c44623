// Quantization kernels. All are memory-bound: each reads its input once per pass with 16-byte
// loads and writes its output once. K's mean and V's channel maxima need a reduction over the
// whole sequence before quantizing, so each of those is one extra read pass (statistics with
// atomics into the zeroed stats region), then the quantizing pass.
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "quantize.h"

namespace sageattn::detail {
namespace {

constexpr int kThreads = 128;
constexpr int kStatRows = 256;     // rows one statistics CTA reduces before its atomics
constexpr int kStatThreads = 256;  // threads of a statistics CTA
constexpr float kLog2e = 1.4426950408889634f;

template <typename T>
__device__ __forceinline__ void load8(const T* src, float (&x)[8]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(src);
  const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i)
    x[i] = static_cast<float>(v[i]);
}

struct InputView {
  const void* data;
  std::int64_t sb, sh, ss;
};

template <typename T>
__device__ __forceinline__ const T* row_ptr(const InputView& in, int b, int h, int s) {
  return static_cast<const T*>(in.data) + b * in.sb + h * in.sh +
         static_cast<std::int64_t>(s) * in.ss;
}

// Column sums (mode 0: K's sum for its mean) or column max |x| (mode 1: V's amax) over
// kStatRows rows per CTA, then one atomic per channel. Each thread reads 16 bytes (8 channels)
// of a row per step, D/8 threads per row and kStatThreads/(D/8) rows in flight per CTA; the
// partial results of those rows meet in shared memory.
template <typename T, int MODE, int D>
__global__ void __launch_bounds__(kStatThreads)
    column_stats_kernel(InputView in, int len, int heads, float* out) {
  constexpr int kThreadsPerRow = D / 8;
  constexpr int kRowsInFlight = kStatThreads / kThreadsPerRow;
  const int b = blockIdx.z, h = blockIdx.y;
  const int col = (threadIdx.x % kThreadsPerRow) * 8, sub = threadIdx.x / kThreadsPerRow;
  const int begin = blockIdx.x * kStatRows;
  const int end = min(len, begin + kStatRows);
  float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll 4
  for (int s = begin + sub; s < end; s += kRowsInFlight) {
    float x[8];
    load8(row_ptr<T>(in, b, h, s) + col, x);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      acc[i] = MODE == 0 ? acc[i] + x[i] : fmaxf(acc[i], fabsf(x[i]));
  }
  __shared__ float partial[kRowsInFlight][D];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    partial[sub][col + i] = acc[i];
  __syncthreads();
  for (int c = threadIdx.x; c < D; c += kStatThreads) {
    float total = partial[0][c];
    for (int r = 1; r < kRowsInFlight; ++r)
      total = MODE == 0 ? total + partial[r][c] : fmaxf(total, partial[r][c]);
    float* slot = out + (static_cast<std::int64_t>(b) * heads + h) * D + c;
    if (MODE == 0) {
      atomicAdd(slot, total);
    } else {
      // Non-negative floats order like their bit patterns as signed integers.
      atomicMax(reinterpret_cast<int*>(slot), __float_as_int(total));
    }
  }
}

// Q or K to INT8: one CTA per `rows` rows of one (batch, head); scale = max|x| / 127, values
// rounded to nearest. K subtracts its mean first (smoothing). Q's scale carries sm_scale·log2(e)
// so the attention kernel works in the exp2 domain; with `q_km` it also writes
// sm_scale·(q · mean(K)) per row, which the LSE needs back.
template <typename T, int D>
__global__ void quantize_rows_kernel(InputView in, int len, int len_pad, int heads, int rows,
                                     std::int8_t* out, float* scales, float scale_mult,
                                     const float* k_sum, int k_sum_heads, int group,
                                     float inv_kv_len, bool subtract_mean, float* q_km,
                                     float sm_scale) {
  constexpr int kThreadsPerRow = D / 8;
  constexpr int kRowsPerPass = kThreads / kThreadsPerRow;
  const int b = blockIdx.z, h = blockIdx.y;
  const int row0 = blockIdx.x * rows;
  const int tid = threadIdx.x;
  const int col = (tid % kThreadsPerRow) * 8;
  const int sub = tid / kThreadsPerRow;
  const float* mean_sum =
      k_sum ? k_sum + (static_cast<std::int64_t>(b) * k_sum_heads + h / group) * D + col : nullptr;
  float mean[8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    mean[i] = mean_sum ? mean_sum[i] * inv_kv_len : 0.f;

  constexpr int kMaxPasses = 64 / kRowsPerPass;
  const int passes = rows / kRowsPerPass;
  float x[kMaxPasses][8];
  float amax = 0.f;
#pragma unroll
  for (int p = 0; p < kMaxPasses; ++p) {
    if (p >= passes) break;
    const int s = row0 + p * kRowsPerPass + sub;
    if (s < len) {
      load8(row_ptr<T>(in, b, h, s) + col, x[p]);
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i)
        x[p][i] = 0.f;
    }
    float dot = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if (q_km) dot += x[p][i] * mean[i];
      if (subtract_mean && s < len) x[p][i] -= mean[i];
      amax = fmaxf(amax, fabsf(x[p][i]));
    }
    if (q_km) {
#pragma unroll
      for (int o = kThreadsPerRow / 2; o > 0; o /= 2)
        dot += __shfl_xor_sync(0xffffffffu, dot, o);
      if (tid % kThreadsPerRow == 0) {
        q_km[(static_cast<std::int64_t>(b) * heads + h) * len_pad + s] =
            s < len ? dot * sm_scale : 0.f;
      }
    }
  }
  // Block-wide max: warps, then across warps through shared memory.
#pragma unroll
  for (int o = 16; o > 0; o /= 2)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  __shared__ float warp_max[kThreads / 32];
  if (tid % 32 == 0) warp_max[tid / 32] = amax;
  __syncthreads();
  amax = warp_max[0];
#pragma unroll
  for (int i = 1; i < kThreads / 32; ++i)
    amax = fmaxf(amax, warp_max[i]);
  const float scale = amax / 127.f;
  const float inv = amax > 0.f ? 127.f / amax : 0.f;
  if (tid == 0) {
    scales[(static_cast<std::int64_t>(b) * heads + h) * (len_pad / rows) + blockIdx.x] =
        scale * scale_mult;
  }
#pragma unroll
  for (int p = 0; p < kMaxPasses; ++p) {
    if (p >= passes) break;
    const int s = row0 + p * kRowsPerPass + sub;
    std::int8_t q[8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
      q[i] = static_cast<std::int8_t>(__float2int_rn(x[p][i] * inv));
    *reinterpret_cast<uint2*>(out + ((static_cast<std::int64_t>(b) * heads + h) * len_pad + s) * D +
                              col) = *reinterpret_cast<const uint2*>(q);
  }
}

// The position of key `l` of a 32-key group as the FP8 P·V mma reads it: the mma's k index
// 4t+i (i < 2) is key 2t+i, and 4t+i (i >= 2) is key 8+2t+i-2, per half of 16; this is where
// the P fragment left by the Q·K^T mma already holds those keys (attention.cuh).
__device__ __forceinline__ int permuted_key(int l) {
  const int half = l / 16, r = l % 16, t = r / 4, i = r % 4;
  return half * 16 + (i < 2 ? 2 * t + i : 8 + 2 * t + (i - 2));
}

// V to FP8 e4m3, transposed to [D][keys] with keys permuted in groups of 32 (above) and the
// padding zeroed: one CTA per 64 keys of one (batch, head).
template <typename T, int D>
__global__ void quantize_v_kernel(InputView in, int len, int len_pad, int heads, const float* amax,
                                  std::uint8_t* out) {
  __shared__ float tile[kBlockN][D + 1];
  const int b = blockIdx.z, h = blockIdx.y, key0 = blockIdx.x * kBlockN;
  for (int i = threadIdx.x; i < kBlockN * (D / 8); i += blockDim.x) {
    const int r = i / (D / 8), c = (i % (D / 8)) * 8;
    float x[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (key0 + r < len) load8(row_ptr<T>(in, b, h, key0 + r) + c, x);
#pragma unroll
    for (int k = 0; k < 8; ++k)
      tile[r][c + k] = x[k];
  }
  __syncthreads();
  const float* channel_max = amax + (static_cast<std::int64_t>(b) * heads + h) * D;
  std::uint8_t* base = out + (static_cast<std::int64_t>(b) * heads + h) * D * len_pad + key0;
  // Each thread writes 16 consecutive positions of one channel row.
  for (int i = threadIdx.x; i < D * (kBlockN / 16); i += blockDim.x) {
    const int d = i / (kBlockN / 16), pos0 = (i % (kBlockN / 16)) * 16;
    const float m = channel_max[d];
    const float inv = m > 0.f ? kFp8Max / m : 0.f;
    alignas(16) __nv_fp8_e4m3 bytes[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int pos = pos0 + j;
      const int key = (pos / 32) * 32 + permuted_key(pos % 32);
      bytes[j] = __nv_fp8_e4m3(tile[key][d] * inv);
    }
    *reinterpret_cast<uint4*>(base + static_cast<std::int64_t>(d) * len_pad + pos0) =
        *reinterpret_cast<const uint4*>(bytes);
  }
}

template <typename T, int D>
cudaError_t quantize_typed(const Params& p, const Workspace& w, float sm_scale,
                           cudaStream_t stream) {
  const InputView q{p.q.data, p.q.stride_batch, p.q.stride_head, p.q.stride_seq};
  const InputView k{p.k.data, p.k.stride_batch, p.k.stride_head, p.k.stride_seq};
  const InputView v{p.v.data, p.v.stride_batch, p.v.stride_head, p.v.stride_seq};
  const bool fp8 = uses_fp8_v(p.pv_path);
  if (cudaError_t e = cudaMemsetAsync(w.k_sum, 0, w.stats_bytes, stream)) return e;
  const dim3 stat_grid((p.kv_len + kStatRows - 1) / kStatRows, p.heads_kv, p.batch);
  if (p.smooth_k) {
    column_stats_kernel<T, 0, D>
        <<<stat_grid, kStatThreads, 0, stream>>>(k, p.kv_len, p.heads_kv, w.k_sum);
  }
  if (fp8) {
    column_stats_kernel<T, 1, D>
        <<<stat_grid, kStatThreads, 0, stream>>>(v, p.kv_len, p.heads_kv, w.v_amax);
  }
  const int group = p.heads_q / p.heads_kv;
  const float inv_kv_len = 1.f / static_cast<float>(p.kv_len);
  quantize_rows_kernel<T, D>
      <<<dim3(w.kv_pad / w.k_rows, p.heads_kv, p.batch), kThreads, 0, stream>>>(
          k, p.kv_len, w.kv_pad, p.heads_kv, w.k_rows, w.k, w.k_scale, 1.f,
          p.smooth_k ? w.k_sum : nullptr, p.heads_kv, 1, inv_kv_len, p.smooth_k, nullptr, 0.f);
  const bool want_km = p.smooth_k && p.lse != nullptr;
  quantize_rows_kernel<T, D><<<dim3(w.q_pad / w.q_rows, p.heads_q, p.batch), kThreads, 0, stream>>>(
      q, p.qo_len, w.q_pad, p.heads_q, w.q_rows, w.q, w.q_scale, sm_scale * kLog2e,
      want_km ? w.k_sum : nullptr, p.heads_kv, group, inv_kv_len, false, want_km ? w.q_km : nullptr,
      sm_scale);
  if (fp8) {
    quantize_v_kernel<T, D><<<dim3(w.kv_pad / kBlockN, p.heads_kv, p.batch), 256, 0, stream>>>(
        v, p.kv_len, w.kv_pad, p.heads_kv, w.v_amax, w.v);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t quantize_inputs(const Params& p, const Workspace& w, float sm_scale,
                            cudaStream_t stream) {
  const bool f16 = p.dtype == DType::f16;
  if (p.head_dim == 64) {
    return f16 ? quantize_typed<half, 64>(p, w, sm_scale, stream)
               : quantize_typed<__nv_bfloat16, 64>(p, w, sm_scale, stream);
  }
  return f16 ? quantize_typed<half, 128>(p, w, sm_scale, stream)
             : quantize_typed<__nv_bfloat16, 128>(p, w, sm_scale, stream);
}

}  // namespace sageattn::detail
