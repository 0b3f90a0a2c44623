// The attention main loop, one template for both P·V paths (mma.sync on sm80..sm120).
//
// Tile: a CTA of 4 warps owns 4 · kRowsPerWarp query rows (32 per warp: two m16 tiles) of one
// (batch, head) and walks the keys in blocks of kBlockN = 64, double-buffered with cp.async:
//   S = Q·K^T      INT8 m16n8k32, int32 accumulation; Q's fragments in registers (d=64) or
//                  read from shared memory per key block (d=128)
//   dequantize     S·q_scale·k_scale (q_scale holds sm_scale·log2 e: exp2 domain)
//   online softmax running row max m and sum l; O rescaled when m grows
//   P·V            fp8 path: P·448 and V/v_scale to e4m3, m16n8k32 into a fresh accumulator per
//                  key block (FP32 or FP16: the instantiation's PvAccum) that is then added to
//                  O in FP32; fp16 path: P in the input's 16-bit type, m16n8k16, FP32
//                  accumulation, or each block summed in FP16 and added to O (mma/pv.cuh).
// Why these sizes: 32 rows per warp make each K and V fragment read from shared memory feed two
// mma tiles (16 rows per warp read twice as much shared memory as the tensor cores can use);
// O (2·D/8·4 floats) and S (64 ints) fit in registers at D = 128, Q's fragments beside them
// only at D = 64;
// 64-key blocks make one fp8 mma k-step pair per d-tile.
//
// By role: config.cuh (the shape), loads.cuh (cp.async tiles), softmax.cuh, pv.cuh, epilogue.cuh;
// Q's quantization in quantize/q_int8.cuh, the causal mask in common/causal.h.
#pragma once

#include <cstdint>

#include "../common/attention_launch.h"
#include "../common/attention_sequence.cuh"
#include "../common/causal.h"
#include "../common/device_primitives.cuh"
#include "../common/workspace.h"
#include "../quantize/q_int8.cuh"
#include "config.cuh"
#include "epilogue.cuh"
#include "loads.cuh"
#include "pv.cuh"
#include "sageattn/sageattn.h"
#include "softmax.cuh"

namespace sageattn::detail {

// kVarlen: a packed batch of sequences (sageattn.h: Varlen); a separate instantiation, so that
// dense calls keep the call's lengths in kernel parameters (attention_sequence.cuh).
template <int D, PvPath PATH, typename VT, PvAccum ACC, bool kVarlen>
__global__ void SAGEATTN_ATTENTION_BOUNDS attention_kernel(const AttentionArgs a) {
  using Cfg = AttentionConfig<D, PATH, VT, ACC>;
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
  const int causal_offset = diagonal_offset(seq.q_len, seq.kv_len);
  // The CTA's last row that exists in the padded Q (its tile may reach past it).
  const int q_pad = kVarlen ? (seq.q_len + kBlockM - 1) / kBlockM * kBlockM : a.q_pad;
  const int n_blocks =
      key_blocks(seq.kv_len, kBlockN, a.causal, min(m0 + Cfg::kCtaRows, q_pad) - 1, causal_offset);

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

    // ---- online softmax (mma/softmax.cuh), P packed m-tile by m-tile as soon as it is
    // computed, so that only one m-tile's P is ever held in floats ----
    const int n0 = nb * kBlockN;
    float k_scale[Cfg::kGroups];
#pragma unroll
    for (int i = 0; i < Cfg::kGroups; ++i)
      k_scale[i] = k_scales[(n0 + 16 * i) >> k_shift];
    const bool masked = block_masked(n0, kBlockN, seq.kv_len, a.causal, m0, causal_offset);
    unsigned pa[kMTiles][Cfg::kPChunks][4];
    float scale_old[kMTiles][2];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      float scale[Cfg::kGroups];
#pragma unroll
      for (int i = 0; i < Cfg::kGroups; ++i)
        scale[i] = q_scale[mt] * k_scale[i];
      auto visible = [&](int j, int e) {
        const int key = n0 + j * 8 + 2 * t + (e & 1);
        const int row = warp_row0 + 16 * mt + g + (e >> 1) * 8;
        return key_visible(key, row, seq.kv_len, a.causal, causal_offset);
      };
      float x[Cfg::kNTiles][4];
      const bool rescale_any = softmax_block<Cfg>(s[mt], scale, masked, visible, row_max[mt],
                                                  row_sum[mt], scale_old[mt], x);
      // Block sums fold this into their FP32 merge below.
      if (!Cfg::kBlockSums && (Cfg::kMaxHeadroom == 0 || __any_sync(0xffffffffu, rescale_any))) {
#pragma unroll
        for (int i = 0; i < Cfg::kDTiles; ++i) {
          o[mt][i][0] *= scale_old[mt][0];
          o[mt][i][1] *= scale_old[mt][0];
          o[mt][i][2] *= scale_old[mt][1];
          o[mt][i][3] *= scale_old[mt][1];
        }
      }
      pack_p<Cfg, PATH>(x, pa[mt]);
    }

    // ---- O += P V (mma/pv.cuh) ----
    accumulate_pv<Cfg, PATH, VT, ACC>(o, pa, s_v + stage * Cfg::kVBytes, lane, scale_old);
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
  device::cp_async_wait<0>();

  // ---- epilogue (mma/epilogue.cuh) ----
  write_attention_output<D, PATH, VT, ACC>(a, seq, head, warp_row0, lane, o, row_max, row_sum,
                                           row_km);
  if (a.sharp_count != nullptr)
    vote_sharp_tiles<D, PATH, VT, ACC>(a, seq, head, m0, warp_row0, tid, row_max, o);
}

template <int D, PvPath PATH, typename VT, PvAccum ACC>
cudaError_t launch_attention(const AttentionArgs& args, int batch, cudaStream_t stream) {
  using Cfg = AttentionConfig<D, PATH, VT, ACC>;
  auto kernel = args.cu_q != nullptr ? attention_kernel<D, PATH, VT, ACC, true>
                                     : attention_kernel<D, PATH, VT, ACC, false>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Cfg::kSmemBytes)) {
    return e;
  }
  const dim3 grid((args.q_pad + Cfg::kCtaRows - 1) / Cfg::kCtaRows, args.heads_q, batch);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace sageattn::detail
