// The sharp-tile kernel: the tiles the attention kernels flagged (sharp_tiles.h) computed again
// with 16-bit Q·Kᵀ, from the caller's Q, K and V, and their O and LSE overwritten.
//
// mma.sync on every architecture the library runs on (sm80 and later), FlashAttention-2's
// algorithm: a CTA of 4 warps takes one flagged 64-row tile at a time (16 rows per warp) and walks
// its keys in blocks of kKeys, K and V double-buffered with cp.async:
//   S = Q·Kᵀ    m16n8k16 in the input's 16-bit type, FP32 accumulation: the products are exact
//               and K is not smoothed (a per-row constant changes no softmax)
//   softmax     exact running row max, exp2 of one FFMA per score; only the last blocks (keys
//               past the sequence, a causal diagonal) test keys against the mask. (A headroom
//               on the max, as the attention kernels have, measured no gain here: rows this
//               sharp move it on most blocks.)
//   P·V         P in the input's 16-bit type, m16n8k16, FP32 accumulation
// Only flagged tiles reach it, so it runs as many CTAs as fit at once over the worklist rather
// than a grid of every tile: on ordinary inputs it is one launch that finds an empty list
// (docs/kernels.md, "Sharp attention", has its cost).
#pragma once

#include <algorithm>
#include <cstdint>

#include "../common/attention_launch.h"
#include "../common/attention_sequence.cuh"
#include "../common/device_primitives.cuh"
#include "../common/mask.h"
#include "../common/sharp_tiles.h"
#include "../common/tile_config.h"

namespace sageattn::detail {

template <int D>
struct SharpRedoConfig {
  static constexpr int kThreads = 128;
  // The manifest's HEAD_DIM_SHAPES row (tile_config.h): past d=128 O is D/2 floats per thread
  // and S gives way.
  static constexpr int kKeys = kHeadDimShape<D>.sharp_keys;
  // Shared-memory rows: the swizzle takes rows of 64 bytes or multiples of 128, so d=96's
  // 192-byte rows sit in 256 (only the first 12 chunks are loaded or read).
  static constexpr int kRowBytes = kHeadDimShape<D>.v_channels * 2;
  static constexpr int kQBytes = kSharpTileRows * kRowBytes;
  static constexpr int kKvBytes = kKeys * kRowBytes;
  static constexpr int kSmemBytes = kQBytes + 4 * kKvBytes;  // Q; K and V, two stages each
  static_assert(D % 16 == 0 && (D / 8) % 4 == 0, "k-steps of 16, output tiles in fours");
};

// kRows rows of a tile (D channels of 16 bits each), rows first .. first + kRows - 1 of
// `base` (`stride` elements apart), copied by the CTA's threads in 16-byte chunks to their
// swizzled places; rows from `limit` on (past the sequence) read as zeros.
template <int D, int kRows>
__device__ __forceinline__ void copy_rows_async(unsigned char* tile, const std::uint16_t* base,
                                                std::int64_t stride, int first, int limit) {
  using Cfg = SharpRedoConfig<D>;
  constexpr int kChunks = D / 8;
  for (int i = threadIdx.x; i < kRows * kChunks; i += Cfg::kThreads) {
    const int row = i / kChunks, chunk = i % kChunks;
    const bool valid = first + row < limit;
    const std::uint16_t* src = base + (valid ? (first + row) * stride : 0) + 8 * chunk;
    device::cp_async_16(tile + device::swizzled_offset<Cfg::kRowBytes>(row / 8, row % 8, chunk),
                        src, valid);
  }
}

// A lane's ldmatrix addresses in a swizzled tile (device::swizzled_offset, rows of 128 bytes or
// more): rows 8·(row8 + 2·i) + r8, chunks 2·j + c0. The swizzle XORs the chunk with r8, which
// reaches only its low 3 bits, so four offsets (j mod 4) serve every chunk: computed per chunk,
// each would be a register of its own (the first build of this kernel used 254 at d=128).
template <int kRowBytes>
struct SwizzledLane {
  static_assert(kRowBytes % 128 == 0);
  int row_base;
  int x[4];
  __device__ __forceinline__ SwizzledLane(int row8, int r8, int c0) {
    row_base = (row8 * 8 + r8) * kRowBytes;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      x[j] = ((2 * j + c0) ^ r8) * 16;
  }
  // i, j: compile-time after unrolling.
  __device__ __forceinline__ int at(int i, int j) const {
    return row_base + i * 16 * kRowBytes + (2 * j & ~7) * 16 + x[j & 3];
  }
};

// The stages of one key block and the epilogue, each for one warp's 16 rows (thread rows g and
// g + 8 of its m16 tile). kNTiles: the block's n8 tiles of keys; kDTiles: O's n8 tiles.
template <int D>
inline constexpr int kSharpKeyTiles = SharpRedoConfig<D>::kKeys / 8;

// ---- stage "S = Q·Kᵀ": 16-bit products, FP32 sums ----
template <int D, typename T>
__device__ __forceinline__ void sharp_scores(
    float (&s)[kSharpKeyTiles<D>][4], const unsigned char* s_q, const unsigned char* sk,
    const SwizzledLane<SharpRedoConfig<D>::kRowBytes>& q_lane,
    const SwizzledLane<SharpRedoConfig<D>::kRowBytes>& k_lane) {
  constexpr int kNTiles = kSharpKeyTiles<D>;
#pragma unroll
  for (int j = 0; j < kNTiles; ++j)
    s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    unsigned qa[4];
    device::ldmatrix_x4(qa, s_q + q_lane.at(0, ks));
#pragma unroll
    for (int jp = 0; jp < kNTiles / 2; ++jp) {
      unsigned b[4];
      device::ldmatrix_x4(b, sk + k_lane.at(jp, ks));
      device::mma_16bit<T>(s[2 * jp], qa, b[0], b[1]);
      device::mma_16bit<T>(s[2 * jp + 1], qa, b[2], b[3]);
    }
  }
}

// ---- stage "online softmax", exp2 domain: P's A fragments, the running max and sums, and
// scale_old, O's rescale ----
// Masked blocks (keys past the sequence, or above a causal diagonal that crosses the warp's
// rows) are the last ones: the others test no key. scale > 0, so a row's largest score times
// scale is its largest scaled score (one FMUL per row, not per score).
template <int D, typename T, bool kMasked>
__device__ __forceinline__ void sharp_softmax(float (&s)[kSharpKeyTiles<D>][4], const KeyMask& mask,
                                              int n0, int warp_row0, int g, int t, float scale,
                                              float (&row_max)[2], float (&row_sum)[2],
                                              float (&scale_old)[2],
                                              unsigned (&pa)[kSharpKeyTiles<D> / 2][4]) {
  constexpr int kNTiles = kSharpKeyTiles<D>;
  float bias[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = warp_row0 + g + 8 * r;
    float top = -INFINITY;
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        if constexpr (kMasked) {
          const int key = n0 + 8 * j + 2 * t + (e & 1);
          if (!mask.visible(key, row)) {
            s[j][e] = -INFINITY;
          }
        }
        top = fmaxf(top, s[j][e]);
      }
    }
    float m = fmaxf(row_max[r], top * scale);
    m = device::quad_max(m);
    const float m_use = m == -INFINITY ? 0.f : m;  // no visible key yet: avoid inf - inf
    scale_old[r] = device::fast_exp2(row_max[r] - m_use);
    row_max[r] = m;
    bias[r] = -m_use;
  }
  float sum[2] = {0.f, 0.f};
#pragma unroll
  for (int j = 0; j < kNTiles; ++j) {
    float p[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      p[e] = device::fast_exp2(fmaf(s[j][e], scale, bias[e >> 1]));
      sum[e >> 1] += p[e];
    }
    pa[j / 2][2 * (j & 1)] = device::pack_16bit_x2<T>(p[0], p[1]);
    pa[j / 2][2 * (j & 1) + 1] = device::pack_16bit_x2<T>(p[2], p[3]);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r)
    row_sum[r] = row_sum[r] * scale_old[r] + sum[r];
}

// ---- stage "O = O·scale_old + P·V": P in the input's 16-bit type, FP32 accumulation ----
template <int D, typename T>
__device__ __forceinline__ void sharp_accumulate_pv(
    float (&o)[D / 8][4], const unsigned (&pa)[kSharpKeyTiles<D> / 2][4],
    const float (&scale_old)[2], const unsigned char* sv,
    const SwizzledLane<SharpRedoConfig<D>::kRowBytes>& v_lane) {
  constexpr int kDTiles = D / 8;
#pragma unroll
  for (int i = 0; i < kDTiles; ++i) {
    o[i][0] *= scale_old[0];
    o[i][1] *= scale_old[0];
    o[i][2] *= scale_old[1];
    o[i][3] *= scale_old[1];
  }
#pragma unroll
  for (int c = 0; c < kSharpKeyTiles<D> / 2; ++c) {
#pragma unroll
    for (int dp = 0; dp < kDTiles / 2; ++dp) {
      unsigned b[4];
      device::ldmatrix_x4_trans(b, sv + v_lane.at(c, dp));
      device::mma_16bit<T>(o[2 * dp], pa[c], b[0], b[1]);
      device::mma_16bit<T>(o[2 * dp + 1], pa[c], b[2], b[3]);
    }
  }
}

// ---- epilogue: O / sum in the caller's type over the flagged tile's rows, and the LSE ----
template <int D, typename T>
__device__ __forceinline__ void sharp_store(const AttentionArgs& a, const SharpTile& tile,
                                            int warp_row0, int g, int t, const float (&o)[D / 8][4],
                                            const float (&row_max)[2], float (&row_sum)[2]) {
  constexpr int kDTiles = D / 8;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 1);
    row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 2);
    const float inv = row_sum[r] > 0.f ? 1.f / row_sum[r] : 0.f;
    const int row = warp_row0 + g + 8 * r;
    const bool active = row < tile.q_len;
    unsigned words[kDTiles];
#pragma unroll
    for (int i = 0; i < kDTiles; ++i)
      words[i] = device::pack_16bit_x2<T>(o[i][2 * r] * inv, o[i][2 * r + 1] * inv);
    std::uint16_t* o_row = static_cast<std::uint16_t*>(a.o) +
                           output_offset(a, tile.b, tile.head, tile.q_start, active ? row : 0);
    device::store_accumulator_row(words, o_row, active, t);
    if (a.lse != nullptr && t == 0 && active) {
      constexpr float kLn2 = 0.6931471805599453f;
      const float value = row_sum[r] > 0.f ? (row_max[r] + __log2f(row_sum[r])) * kLn2 : -INFINITY;
      a.lse[a.cu_q != nullptr ? lse_offset<true>(a, tile.b, tile.head, tile.q_start, row)
                              : lse_offset<false>(a, tile.b, tile.head, tile.q_start, row)] = value;
    }
  }
}

template <int D, typename T>
__global__ void __launch_bounds__(128) sharp_redo_kernel(const AttentionArgs a) {
  using Cfg = SharpRedoConfig<D>;
  constexpr int kKeys = Cfg::kKeys, kDTiles = D / 8;
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned char* s_q = smem;
  unsigned char* s_k = smem + Cfg::kQBytes;
  unsigned char* s_v = s_k + 2 * Cfg::kKvBytes;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int mi = lane / 8, r8 = lane % 8;  // ldmatrix: the matrix and row this lane addresses
  // Q: matrices (rows 0-7, 8-15) x (k 0-7, 8-15) of the warp's rows; K: (k 0-7, 8-15) of key
  // groups 2jp, 2jp + 1; V (transposed): key groups 2c, 2c + 1 x channel groups 2dp, 2dp + 1.
  const SwizzledLane<Cfg::kRowBytes> q_lane(2 * warp + (mi & 1), r8, mi >> 1);
  const SwizzledLane<Cfg::kRowBytes> k_lane(mi >> 1, r8, mi & 1);
  const SwizzledLane<Cfg::kRowBytes> v_lane(mi & 1, r8, mi >> 1);
  const float scale = a.sm_scale * kLog2e;  // exp2 domain
  // Launched as a programmatic dependent of the attention kernels (sm_90+): they may still be
  // running; the worklist is theirs until they are done.
  device::wait_for_prerequisites();
  const unsigned count = min(*a.sharp_count, static_cast<unsigned>(a.sharp_capacity));

  for (unsigned item = blockIdx.x; item < count; item += gridDim.x) {
    // ---- load: the flagged tile's Q, and K and V double-buffered by key block ----
    const SharpTile tile = a.sharp_tiles[item];
    const int kv_head = tile.head / (a.heads_q / a.heads_kv);
    const auto* q_base = static_cast<const std::uint16_t*>(a.q16) + tile.b * a.q_sb +
                         tile.head * a.q_sh + static_cast<std::int64_t>(tile.q_start) * a.q_ss;
    const auto* k_base = static_cast<const std::uint16_t*>(a.k16) + tile.b * a.k_sb +
                         kv_head * a.k_sh + static_cast<std::int64_t>(tile.kv_start) * a.k_ss;
    const auto* v_base = static_cast<const std::uint16_t*>(a.v) + tile.b * a.v_sb +
                         kv_head * a.v_sh + static_cast<std::int64_t>(tile.kv_start) * a.v_ss;
    const KeyMask mask = KeyMask::of_sequence(a.mask, tile.q_len, tile.kv_len);
    const int n_blocks = mask.key_blocks(kKeys, min(tile.row0 + kSharpTileRows, tile.q_len) - 1);
    auto load_kv = [&](int block, int stage) {
      const int n0 = block * kKeys;
      copy_rows_async<D, kKeys>(s_k + stage * Cfg::kKvBytes, k_base, a.k_ss, n0, tile.kv_len);
      copy_rows_async<D, kKeys>(s_v + stage * Cfg::kKvBytes, v_base, a.v_ss, n0, tile.kv_len);
    };
    __syncthreads();  // the previous tile's reads of shared memory are done
    copy_rows_async<D, kSharpTileRows>(s_q, q_base, a.q_ss, tile.row0, tile.q_len);
    if (n_blocks > 0) load_kv(0, 0);
    device::cp_async_commit();

    const int warp_row0 = tile.row0 + 16 * warp;  // the warp's rows, in the sequence
    float o[kDTiles][4];
#pragma unroll
    for (int i = 0; i < kDTiles; ++i)
      o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

    for (int nb = 0; nb < n_blocks; ++nb) {
      const int stage = nb & 1;
      device::double_buffer_step(nb, n_blocks, load_kv);
      float s[kSharpKeyTiles<D>][4];
      sharp_scores<D, T>(s, s_q, s_k + stage * Cfg::kKvBytes, q_lane, k_lane);
      const int n0 = nb * kKeys;
      float scale_old[2];
      unsigned pa[kKeys / 16][4];
      if (mask.block_masked(n0, kKeys, warp_row0)) {
        sharp_softmax<D, T, true>(s, mask, n0, warp_row0, g, t, scale, row_max, row_sum, scale_old,
                                  pa);
      } else {
        sharp_softmax<D, T, false>(s, mask, n0, warp_row0, g, t, scale, row_max, row_sum, scale_old,
                                   pa);
      }
      sharp_accumulate_pv<D, T>(o, pa, scale_old, s_v + stage * Cfg::kKvBytes, v_lane);
      __syncthreads();  // every warp is done with this stage before it is refilled
    }
    device::cp_async_wait<0>();
    sharp_store<D, T>(a, tile, warp_row0, g, t, o, row_max, row_sum);
  }

  // The last CTA to finish resets the worklist for the next call: every CTA read the count
  // before it arrived here. (An empty list needs no reset: every CTA saw the same 0 and leaves
  // without an atomic, which is all the kernel does on ordinary inputs.)
  if (count == 0) return;
  __syncthreads();
  if (tid == 0) {
    __threadfence();
    if (atomicAdd(a.sharp_count + 1, 1u) == gridDim.x - 1) {
      a.sharp_count[0] = 0;
      a.sharp_count[1] = 0;
    }
  }
}

template <int D, typename T>
cudaError_t launch_sharp_redo(const AttentionArgs& args, int sms, bool programmatic,
                              cudaStream_t stream) {
  // A head dim SAGEATTN_HEAD_DIMS left out (common/attention_launch.h): no kernel compiled.
  if constexpr (kHeadDimLeftOut) {
    return cudaErrorNotSupported;
  } else {
    using Cfg = SharpRedoConfig<D>;
    if (cudaError_t e =
            cudaFuncSetAttribute(sharp_redo_kernel<D, T>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes)) {
      return e;
    }
    // As many CTAs as fit on the GPU at once (registers and shared memory permitting: two per SM
    // at d=128 on an H100), at most one per entry the list can hold. Asked once per
    // instantiation, not per call: a wrong count (another GPU of another kind in the process)
    // changes only how many CTAs share the list, never which tiles are done.
    static const int per_sm = [] {
      int n = 0;
      const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &n, sharp_redo_kernel<D, T>, Cfg::kThreads, Cfg::kSmemBytes);
      return e == cudaSuccess && n > 0 ? n : 1;
    }();
    const int ctas = std::max(1, std::min(per_sm * sms, args.sharp_capacity));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(ctas);
    config.blockDim = dim3(Cfg::kThreads);
    config.dynamicSmemBytes = Cfg::kSmemBytes;
    config.stream = stream;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &attribute;
    config.numAttrs = programmatic ? 1 : 0;
    return cudaLaunchKernelEx(&config, sharp_redo_kernel<D, T>, args);
  }
}

}  // namespace sageattn::detail
