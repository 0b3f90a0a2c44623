// The attention main loop, one template for both P·V paths (mma.sync on sm80..sm120).
//
// Tile: a CTA of 4 warps owns 4 · kRowsPerWarp query rows (32 per warp: two m16 tiles) of one
// (batch, head) and walks the keys in blocks of kBlockN = 64, double-buffered with cp.async:
//   S = Q·K^T      INT8 m16n8k32, int32 accumulation; Q's fragments in registers (d=64) or
//                  read from shared memory per key block (d=128)
//   dequantize     S·q_scale·k_scale (q_scale holds sm_scale·log2 e: exp2 domain)
//   online softmax running row max m and sum l; O rescaled when m grows
//   P·V            fp8 path: P·448 and V/v_scale to e4m3, m16n8k32 into a fresh accumulator per
//                  key block that is then added to O in FP32 (two-level accumulation: the FP8
//                  mma's accumulator keeps fewer bits than FP32);
//                  fp16 path: P in the input's 16-bit type, m16n8k16, FP32 accumulation.
// Why these sizes: 32 rows per warp make each K and V fragment read from shared memory feed two
// mma tiles (16 rows per warp read twice as much shared memory as the tensor cores can use);
// O (2·D/8·4 floats) and S (64 ints) fit in registers at D = 128, Q's fragments beside them
// only at D = 64;
// 64-key blocks make one fp8 mma k-step pair per d-tile.
#pragma once

#include <cstdint>
#include <type_traits>

#include "attention_launch.h"
#include "attention_sequence.cuh"
#include "device_primitives.cuh"
#include "epilogue.cuh"
#include "quantize_q.cuh"
#include "sageattn/sageattn.h"
#include "sharp_flag.cuh"
#include "workspace.h"

namespace sageattn::detail {

// Query rows per warp, in m16 tiles: each K and V fragment read from shared memory feeds
// kMTiles mma tiles, so shared-memory reads per operation fall by that factor (kernels/NOTES.md,
// version 7: the kernels read more from shared memory than the tensor cores consume).
#ifndef SAGEATTN_MMA_MTILES
#define SAGEATTN_MMA_MTILES 2
#endif

template <int D, PvPath PATH, typename VT>
struct AttentionConfig {
  static_assert(D == 64 || D == 128 || (D == 256 && PATH == PvPath::fp16),
                "head dims 64 and 128, and 256 with 16-bit P·V");
  static constexpr int kThreads = 128;
  // At d=256 O alone is 128 floats per m16 tile and thread: one tile per warp.
  static constexpr int kMTiles = D == 256 ? 1 : SAGEATTN_MMA_MTILES;  // m16 tiles per warp
  static_assert(kMTiles == 1 || kMTiles == 2, "16 or 32 rows per warp");
  static constexpr int kRowsPerWarp = 16 * kMTiles;
  static constexpr int kCtaRows = 4 * kRowsPerWarp;
  // Q's fragments (kMTiles·D/8 words) stay in registers unless that makes O, S and Q spill
  // (D = 128 at 32 rows per warp, D = 256); then they are read from shared memory at each key
  // block.
  static constexpr bool kQInRegisters = D == 64 || (kMTiles == 1 && D == 128);
  static constexpr int kDTiles = D / 8;        // n8 tiles of the output
  static constexpr int kNTiles = kBlockN / 8;  // n8 tiles of S
  static constexpr int kQBytes = kCtaRows * D;
  static constexpr int kKBytes = kBlockN * D;
  static constexpr int kVBytes = PATH == PvPath::fp8 ? D * kBlockN : kBlockN * D * 2;
  // Q's quantization (quantize_q.cuh): per row sm_scale·(q · mean(K)) for the LSE, and per warp
  // its rows' max |q| (per_block scales take the block's).
  static constexpr int kQAuxOffset = kQBytes + 2 * kKBytes + 2 * kVBytes;
  static constexpr int kSmemBytes = kQAuxOffset + (kCtaRows + 4) * 4;
  // log2 of the factor P is computed with: 448 (e4m3's largest value) on the fp8 path, so that
  // P uses e4m3's whole range; the row sums carry it too, so it cancels in O = P·V / sum.
  static constexpr float kLog2PScale = PATH == PvPath::fp8 ? kLog2Fp8Max : 0.f;
  // 16-bit P·V path: the subtracted row max moves only when a block's max exceeds it by more
  // than this (log2 units; P ≤ 2^kMaxHeadroom, far inside fp16 and bf16), so that most blocks
  // skip O's rescale (2·D multiplies per row pair; kernels/NOTES.md, mma-max-headroom). 0: the
  // exact running max, O rescaled per block. The fp8 path scales P to e4m3's 448 and needs the
  // exact max.
  static constexpr float kMaxHeadroom = PATH == PvPath::fp8 ? 0.f : kMmaMaxHeadroom;
  // The quantization's scale groups (kWarpRows rows, or kBlockM per block) never straddle an
  // m16 tile, and a CTA's tile is a whole number of the workspace's padding (kBlockM).
  static_assert(kWarpRows == 16 && kCtaRows % kBlockM == 0);
};

// CTAs per SM the register allocation aims for (128 threads each). 0, the default, gives ptxas
// no minimum (an explicit 1 is not the same: it lets the FP8 d128 kernel grow to 255 registers
// and spill); 3 caps registers at 168 so that 12 warps share an SM (kernels/NOTES.md,
// mma-launch-bounds-168).
#ifndef SAGEATTN_MIN_CTAS_PER_SM
#define SAGEATTN_MIN_CTAS_PER_SM 0
#endif
#if SAGEATTN_MIN_CTAS_PER_SM > 0
#define SAGEATTN_ATTENTION_BOUNDS __launch_bounds__(128, SAGEATTN_MIN_CTAS_PER_SM)
#else
#define SAGEATTN_ATTENTION_BOUNDS __launch_bounds__(128)
#endif

// A tile of kRows rows of kRowBytes, copied by the CTA's 128 threads in 16-byte chunks to its
// swizzled place in shared memory: copy(row, chunk, destination) issues one chunk. Each thread
// keeps one chunk column and steps through rows a multiple of 8 apart, so its swizzle is the
// same for all of them and the destinations differ by constants (no address registers to
// keep, see swizzled_offset).
// (Rows of 512 bytes, d=256's 16-bit V, take 4 rows per pass: a thread's rows then alternate
// between two swizzles.)
template <int kRowBytes, int kRows, typename Copy>
__device__ __forceinline__ void copy_tile_async(unsigned char* tile, int tid, Copy copy) {
  constexpr int kChunks = kRowBytes / 16;
  constexpr int kRowsPerPass = 128 / kChunks;
  static_assert((kRowsPerPass % 8 == 0 || kRowsPerPass == 4) && kRows % kRowsPerPass == 0,
                "whole passes of 8-row groups, or of half ones");
  const int row0 = tid / kChunks, chunk = tid % kChunks;
#pragma unroll
  for (int pass = 0; pass < kRows / kRowsPerPass; ++pass) {
    const int row = row0 + pass * kRowsPerPass;
    if constexpr (kRowsPerPass % 8 == 0) {
      copy(row, chunk,
           tile + device::swizzled_offset<kRowBytes>(row0 / 8 + pass * kRowsPerPass / 8, row0 % 8,
                                                     chunk));
    } else {
      copy(row, chunk, tile + device::swizzled_offset<kRowBytes>(row / 8, row % 8, chunk));
    }
  }
}

// kVarlen: a packed batch of sequences (sageattn.h: Varlen); a separate instantiation, so that
// dense calls keep the call's lengths in kernel parameters (attention_sequence.cuh).
template <int D, PvPath PATH, typename VT, bool kVarlen>
__global__ void SAGEATTN_ATTENTION_BOUNDS attention_kernel(const AttentionArgs a) {
  using Cfg = AttentionConfig<D, PATH, VT>;
  constexpr int kMTiles = Cfg::kMTiles;
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned char* s_q = smem;
  unsigned char* s_k = smem + Cfg::kQBytes;
  unsigned char* s_v = s_k + 2 * Cfg::kKBytes;

  // Longest rows first under causal masking: they have the most key blocks.
  const int m_block = a.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int head = blockIdx.y, batch = blockIdx.z;
  const int kv_head = head / (a.heads_q / a.heads_kv);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int m0 = m_block * Cfg::kCtaRows;
  // The sharp-tile kernel after this one may be scheduled as this grid's last CTAs run (it
  // waits for them before it reads the worklist): sharp_redo.cuh.
  if (a.sharp_count != nullptr) device::launch_dependents();
  const AttentionSequence<kVarlen> seq(a, batch, kv_head);
  // A varlen sequence shorter than the grid's tiles (a dense call's grid covers its rows).
  if (kVarlen && m0 >= seq.q_len) return;
  const int warp_row0 = m0 + warp * Cfg::kRowsPerWarp;  // row of this warp's m-tile 0
  const int causal_offset = seq.kv_len - seq.q_len;     // bottom-right alignment

  int n_blocks = (seq.kv_len + kBlockN - 1) / kBlockN;
  if (a.causal) {
    const int q_pad = kVarlen ? (seq.q_len + kBlockM - 1) / kBlockM * kBlockM : a.q_pad;
    const int last_key = min(m0 + Cfg::kCtaRows, q_pad) - 1 + causal_offset;
    n_blocks = last_key < 0 ? 0 : min(n_blocks, last_key / kBlockN + 1);
  }

  const std::int8_t* k_base = a.k + seq.ws_row0(a) * D;

  // Q: this warp's rows of the caller's 16-bit Q, requested first (quantize_q.cuh), quantized
  // into the Q tile once the first K and V tiles are on their way.
  uint4 q_raw[kQLoads<D, Cfg::kRowsPerWarp>];
  load_q_rows<D, Cfg::kRowsPerWarp>(a, seq, head, warp_row0, lane, q_raw);

  // ---- asynchronous tile loads (16-byte chunks, swizzled) ----
  auto load_kv = [&](int block, int stage) {
    const int n0 = block * kBlockN;
    copy_tile_async<D, kBlockN>(
        s_k + stage * Cfg::kKBytes, tid, [&](int row, int chunk, unsigned char* dst) {
          device::cp_async_16(dst, k_base + static_cast<std::int64_t>(n0 + row) * D + chunk * 16,
                              true);
        });
    unsigned char* sv = s_v + stage * Cfg::kVBytes;
    if constexpr (PATH == PvPath::fp8) {
      const std::uint8_t* v_base =
          a.v_fp8 + static_cast<std::int64_t>(seq.unit) * D * a.unit_rows + seq.unit_row0 + n0;
      copy_tile_async<kBlockN, D>(sv, tid, [&](int row, int chunk, unsigned char* dst) {
        device::cp_async_16(dst, v_base + static_cast<std::int64_t>(row) * a.unit_rows + chunk * 16,
                            true);
      });
    } else {
      const VT* v_base = static_cast<const VT*>(a.v) + seq.b * a.v_sb + kv_head * a.v_sh +
                         static_cast<std::int64_t>(seq.kv_start) * a.v_ss;
      copy_tile_async<D * 2, kBlockN>(sv, tid, [&](int row, int chunk, unsigned char* dst) {
        const int key = n0 + row;
        const bool valid = key < seq.kv_len;
        device::cp_async_16(
            dst, v_base + static_cast<std::int64_t>(valid ? key : 0) * a.v_ss + chunk * 8, valid);
      });
    }
  };

  if (n_blocks > 0) load_kv(0, 0);
  device::cp_async_commit();

  // The tile's rows are read (ldmatrix) only after the main loop's first __syncthreads.
  float* q_aux = reinterpret_cast<float*>(smem + Cfg::kQAuxOffset);
  float* row_km = q_aux + warp * Cfg::kRowsPerWarp;  // [kRowsPerWarp]
  constexpr int kWarpsPerBlock = kBlockM / Cfg::kRowsPerWarp;
  const QTileTarget q_target{s_q, warp * Cfg::kRowsPerWarp, row_km,
                             q_aux + Cfg::kCtaRows + warp / kWarpsPerBlock * kWarpsPerBlock,
                             warp % kWarpsPerBlock};
  float q_scale[kMTiles];  // per m-tile (16 rows, the per_warp granularity)
  quantize_q_rows<D, Cfg::kRowsPerWarp>(
      a, seq, warp_row0, lane, q_raw, q_target, [] { __syncthreads(); }, q_scale);

  float o[kMTiles][Cfg::kDTiles][4];
  float row_max[kMTiles][2], row_sum[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int i = 0; i < Cfg::kDTiles; ++i)
      o[mt][i][0] = o[mt][i][1] = o[mt][i][2] = o[mt][i][3] = 0.f;
    row_max[mt][0] = row_max[mt][1] = -INFINITY;
    row_sum[mt][0] = row_sum[mt][1] = 0.f;
  }
  const float* k_scales = seq.k_scales(a);
  // k_rows is 16 or kBlockM (a power of two): a shift, not kNTiles integer divisions per key
  // block (the same change in the Hopper kernel: kernels/NOTES.md, sm90-kscale-shift).
  const int k_shift = __ffs(a.k_rows) - 1;
  unsigned qa[kMTiles][Cfg::kQInRegisters ? D / 32 : 1][4];
  auto load_q_fragments = [&](int ks, int slot) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const int mi = lane / 8, r = lane % 8;
      const int row8 = (warp * Cfg::kRowsPerWarp + 16 * mt) / 8 + (mi & 1);
      device::ldmatrix_x4(qa[mt][slot],
                          s_q + device::swizzled_offset<D>(row8, r, ks * 2 + (mi >> 1)));
    }
  };

  for (int nb = 0; nb < n_blocks; ++nb) {
    const int stage = nb & 1;
    device::double_buffer_step(nb, n_blocks, load_kv);

    if (Cfg::kQInRegisters && nb == 0) {
#pragma unroll
      for (int ks = 0; ks < D / 32; ++ks)
        load_q_fragments(ks, ks);
    }

    // ---- S = Q K^T: each K fragment feeds every m-tile ----
    // S starts at the 2^23 trick's bias (device::kSmallIntBiasBits): the scores come out as the
    // floats kSmallIntBias + s, with no integer add per score (kernels/NOTES.md, mma-score-bias).
    int s[kMTiles][Cfg::kNTiles][4];
    const unsigned char* sk = s_k + stage * Cfg::kKBytes;
#pragma unroll
    for (int ks = 0; ks < D / 32; ++ks) {
      const int q_slot = Cfg::kQInRegisters ? ks : 0;
      if constexpr (!Cfg::kQInRegisters) load_q_fragments(ks, 0);
#pragma unroll
      for (int jp = 0; jp < Cfg::kNTiles / 2; ++jp) {
        const int mi = lane / 8, r = lane % 8;
        unsigned b[4];
        device::ldmatrix_x4(
            b, sk + device::swizzled_offset<D>(2 * jp + (mi >> 1), r, ks * 2 + (mi & 1)));
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          if (ks == 0) {
            device::mma_s8_from(s[mt][2 * jp], qa[mt][q_slot], b[0], b[1],
                                device::kSmallIntBiasBits);
            device::mma_s8_from(s[mt][2 * jp + 1], qa[mt][q_slot], b[2], b[3],
                                device::kSmallIntBiasBits);
          } else {
            device::mma_s8(s[mt][2 * jp], qa[mt][q_slot], b[0], b[1]);
            device::mma_s8(s[mt][2 * jp + 1], qa[mt][q_slot], b[2], b[3]);
          }
        }
      }
    }

    // ---- online softmax (exp2 domain): one FFMA and one ex2 per score ----
    // S·q_scale·k_scale is the logit in the exp2 domain (q_scale holds sm_scale·log2 e). The
    // dequantization, the row max and (fp8 path) P's ×448 are folded into one FFMA per score:
    // exp2(f·scale + bias) with f = kSmallIntBias + s as a float (S started at the bias) and
    // bias = -kSmallIntBias·scale - m (+ log2 448). Keys share a K scale in groups of 16 (k_rows is
    // 16 or 64), so the row max is taken over the integer scores of each group and scaled once.
    const int n0 = nb * kBlockN;
    constexpr int kGroups = kBlockN / 16;  // pairs of n8 tiles
    float k_scale[kGroups];
#pragma unroll
    for (int i = 0; i < kGroups; ++i)
      k_scale[i] = k_scales[(n0 + 16 * i) >> k_shift];
    const bool partial = n0 + kBlockN > seq.kv_len;
    const bool diagonal = a.causal && n0 + kBlockN - 1 > m0 + causal_offset;
    const bool masked = partial || diagonal;
    // P (×448 on the fp8 path) packed as the P·V mma's A fragments, m-tile by m-tile as soon as
    // it is computed, so that only one m-tile's P is ever held in floats. fp8: P's C fragment
    // becomes the A fragment of 32-key chunks directly; V's keys were permuted to match when
    // it was quantized (quantize.cu, quad_first_key).
    constexpr int kPChunks = PATH == PvPath::fp8 ? kBlockN / 32 : kBlockN / 16;
    unsigned pa[kMTiles][kPChunks][4];
    float scale_old[kMTiles][2];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      float scale[kGroups];
#pragma unroll
      for (int i = 0; i < kGroups; ++i)
        scale[i] = q_scale[mt] * k_scale[i];
      // Whether accumulator element (j, e) is a key this row may see; only asked on masked
      // blocks.
      auto visible = [&](int j, int e) {
        const int key = n0 + j * 8 + 2 * t + (e & 1);
        const int row = warp_row0 + 16 * mt + g + (e >> 1) * 8;
        return key < seq.kv_len && !(a.causal && key > row + causal_offset);
      };
      float bias[2][kGroups];
      bool rescale_any = false;  // with kMaxHeadroom: whether a row's subtracted max moved
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float m = row_max[mt][r];
        if (masked) {
#pragma unroll
          for (int j = 0; j < Cfg::kNTiles; ++j) {
#pragma unroll
            for (int e = 2 * r; e < 2 * r + 2; ++e)
              if (visible(j, e))
                m = fmaxf(m, device::biased_score_value(s[mt][j][e]) * scale[j / 2]);
          }
        } else {
          float top[kGroups];  // scale ≥ 0, so the largest score of a group is its largest int
#pragma unroll
          for (int i = 0; i < kGroups; ++i) {
            const int* lo = s[mt][2 * i] + 2 * r;
            const int* hi = s[mt][2 * i + 1] + 2 * r;
            top[i] =
                device::biased_score_value(max(max(lo[0], lo[1]), max(hi[0], hi[1]))) * scale[i];
          }
          m = fmaxf(m, device::max_tree(top));
        }
        m = device::quad_max(m);
        if constexpr (Cfg::kMaxHeadroom > 0) {
          // Keep subtracting the old max while the block's stays within the headroom of it (P
          // ≤ 2^headroom): then O needs no rescale, and the warp skips it (below).
          if (!(m > row_max[mt][r] + Cfg::kMaxHeadroom)) m = row_max[mt][r];
          rescale_any |= m != row_max[mt][r];
        }
        // A row with no visible key yet keeps m = -inf; subtract 0 instead to avoid inf - inf.
        const float m_use = m == -INFINITY ? 0.f : m;
        scale_old[mt][r] = device::fast_exp2(row_max[mt][r] - m_use);
        row_max[mt][r] = m;
#pragma unroll
        for (int i = 0; i < kGroups; ++i)
          bias[r][i] = fmaf(-device::kSmallIntBias, scale[i], Cfg::kLog2PScale - m_use);
      }
      // Row sums of the unrounded P, as the host reference, in two chains per row. Unmasked
      // blocks (all but the last and the diagonal) test nothing.
      float x[Cfg::kNTiles][4];
      float sum[4] = {0.f, 0.f, 0.f, 0.f};
      auto exponentiate = [&](auto masked_block) {
#pragma unroll
        for (int j = 0; j < Cfg::kNTiles; ++j) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            float arg = fmaf(device::biased_score(s[mt][j][e]), scale[j / 2], bias[e >> 1][j / 2]);
            if constexpr (decltype(masked_block)::value) {
              if (!visible(j, e)) arg = -INFINITY;
            }
            x[j][e] = device::fast_exp2(arg);
            sum[e] += x[j][e];
          }
        }
      };
      if (masked)
        exponentiate(std::true_type{});
      else
        exponentiate(std::false_type{});
#pragma unroll
      for (int r = 0; r < 2; ++r)
        row_sum[mt][r] = row_sum[mt][r] * scale_old[mt][r] + (sum[2 * r] + sum[2 * r + 1]);
      // The fp8 path folds this into its FP32 merge below.
      if (PATH != PvPath::fp8 && (Cfg::kMaxHeadroom == 0 || __any_sync(0xffffffffu, rescale_any))) {
#pragma unroll
        for (int i = 0; i < Cfg::kDTiles; ++i) {
          o[mt][i][0] *= scale_old[mt][0];
          o[mt][i][1] *= scale_old[mt][0];
          o[mt][i][2] *= scale_old[mt][1];
          o[mt][i][3] *= scale_old[mt][1];
        }
      }
      if constexpr (PATH == PvPath::fp8) {
#pragma unroll
        for (int c = 0; c < kPChunks; ++c) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int j = 4 * c + 2 * half;
#pragma unroll
            for (int r = 0; r < 2; ++r) {
              const unsigned lo = device::pack_e4m3x2(x[j][2 * r], x[j][2 * r + 1]);
              const unsigned hi = device::pack_e4m3x2(x[j + 1][2 * r], x[j + 1][2 * r + 1]);
              pa[mt][c][2 * half + r] = lo | (hi << 16);
            }
          }
        }
      } else {
#pragma unroll
        for (int c = 0; c < kPChunks; ++c) {
          pa[mt][c][0] = device::pack_16bit_x2<VT>(x[2 * c][0], x[2 * c][1]);
          pa[mt][c][1] = device::pack_16bit_x2<VT>(x[2 * c][2], x[2 * c][3]);
          pa[mt][c][2] = device::pack_16bit_x2<VT>(x[2 * c + 1][0], x[2 * c + 1][1]);
          pa[mt][c][3] = device::pack_16bit_x2<VT>(x[2 * c + 1][2], x[2 * c + 1][3]);
        }
      }
    }

    // ---- O += P V: each V fragment feeds every m-tile ----
    const unsigned char* sv = s_v + stage * Cfg::kVBytes;
    if constexpr (PATH == PvPath::fp8) {
#pragma unroll
      for (int dt = 0; dt < Cfg::kDTiles; ++dt) {
        unsigned b[4];
        const int mi = lane / 8, r = lane % 8;
        device::ldmatrix_x4(b, sv + device::swizzled_offset<kBlockN>(dt, r, mi));
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          float acc[4] = {0.f, 0.f, 0.f, 0.f};
          device::mma_e4m3(acc, pa[mt][0], b[0], b[1]);
          device::mma_e4m3(acc, pa[mt][1], b[2], b[3]);
          // The rescale rides on the merge.
          o[mt][dt][0] = fmaf(o[mt][dt][0], scale_old[mt][0], acc[0]);
          o[mt][dt][1] = fmaf(o[mt][dt][1], scale_old[mt][0], acc[1]);
          o[mt][dt][2] = fmaf(o[mt][dt][2], scale_old[mt][1], acc[2]);
          o[mt][dt][3] = fmaf(o[mt][dt][3], scale_old[mt][1], acc[3]);
        }
      }
    } else {
#pragma unroll
      for (int c = 0; c < kBlockN / 16; ++c) {
#pragma unroll
        for (int dp = 0; dp < Cfg::kDTiles / 2; ++dp) {
          unsigned b[4];
          const int mi = lane / 8, r = lane % 8;
          device::ldmatrix_x4_trans(
              b, sv + device::swizzled_offset<D * 2>(2 * c + (mi & 1), r, 2 * dp + (mi >> 1)));
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            device::mma_16bit<VT>(o[mt][2 * dp], pa[mt][c], b[0], b[1]);
            device::mma_16bit<VT>(o[mt][2 * dp + 1], pa[mt][c], b[2], b[3]);
          }
        }
      }
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
  device::cp_async_wait<0>();

  // ---- epilogue: normalise, write O (and the LSE) ----
  float2 col_scale[Cfg::kDTiles];
#pragma unroll
  for (int dt = 0; dt < Cfg::kDTiles; ++dt) {
    col_scale[dt] = make_float2(1.f, 1.f);
    if constexpr (PATH == PvPath::fp8) {
      // V was scaled by 448 / amax: undo it. (P's 448 is in row_sum too, so it cancels.) Read
      // through the read-only path, which tells the compiler that the stores of O cannot change
      // it: with a plain load each waited for the stores before it, one round trip per column
      // tile (kernels/NOTES.md, the Hopper kernel's sm90-epilogue-factors-early).
      const float2 amax = __ldg(reinterpret_cast<const float2*>(
          a.v_amax + static_cast<std::int64_t>(seq.stats) * D + dt * 8 + 2 * t));
      col_scale[dt] = make_float2(amax.x * (1.f / kFp8Max), amax.y * (1.f / kFp8Max));
    }
  }
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_sum[mt][r] += __shfl_xor_sync(0xffffffffu, row_sum[mt][r], 1);
      row_sum[mt][r] += __shfl_xor_sync(0xffffffffu, row_sum[mt][r], 2);
      inv[r] = row_sum[mt][r] > 0.f ? 1.f / row_sum[mt][r] : 0.f;
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      write_output_row<Cfg::kDTiles>(a, seq, head, warp_row0 + 16 * mt + g + r * 8, t, [&](int dt) {
        return make_float2(o[mt][dt][2 * r] * col_scale[dt].x * inv[r],
                           o[mt][dt][2 * r + 1] * col_scale[dt].y * inv[r]);
      });
    }
    if (a.lse != nullptr && t == 0) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = warp_row0 + 16 * mt + g + r * 8;
        if (row >= seq.q_len) continue;
        constexpr float kLn2 = 0.6931471805599453f;
        float value = -INFINITY;
        if (row_sum[mt][r] > 0.f) {
          value = (row_max[mt][r] + __log2f(row_sum[mt][r]) - Cfg::kLog2PScale) * kLn2;
          if (a.k_sum != nullptr) value += row_km[16 * mt + g + r * 8];
        }
        a.lse[seq.lse_row(a, head, row)] = kVarlen && seq.invalid ? NAN : value;
      }
    }
  }

  // ---- the sharp-tile guard: a 64-row tile with a row past the limit goes on the worklist
  // (sharp_tiles.h); its warps vote on a named barrier of their own ----
  if (a.sharp_count != nullptr) {
    bool sharp = false;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        sharp |=
            sharp_row(a, seq, warp_row0 + 16 * mt + g + 8 * r, row_max[mt][r], Cfg::kMaxHeadroom);
      }
    }
    // (Barrier ids as constants: a computed one makes ptxas reserve all 16 of them.)
    constexpr int kTileThreads = kSharpTileRows / Cfg::kRowsPerWarp * 32;
    const int tile = tid / kTileThreads;
    const bool any = tile == 0 ? device::barrier_or(1, kTileThreads, sharp)
                               : device::barrier_or(2, kTileThreads, sharp);
    static_assert(Cfg::kCtaRows <= 2 * kSharpTileRows, "a barrier per tile: ids 1 and 2");
    if (any && tid % kTileThreads == 0) append_sharp_tile(a, seq, head, m0 + kSharpTileRows * tile);
  }
}

template <int D, PvPath PATH, typename VT>
cudaError_t launch_attention(const AttentionArgs& args, int batch, cudaStream_t stream) {
  using Cfg = AttentionConfig<D, PATH, VT>;
  auto kernel = args.cu_q != nullptr ? attention_kernel<D, PATH, VT, true>
                                     : attention_kernel<D, PATH, VT, false>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Cfg::kSmemBytes)) {
    return e;
  }
  const dim3 grid((args.q_pad + Cfg::kCtaRows - 1) / Cfg::kCtaRows, args.heads_q, batch);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace sageattn::detail
