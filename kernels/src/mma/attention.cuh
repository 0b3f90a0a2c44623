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
// The kernel is its stages, each a function of its own taking the instantiation's
// AttentionConfig (config.cuh: the shape, and the path, V type and accumulation as policy):
// load (loads.cuh: cp.async tiles), Q·Kᵀ (qk.cuh), softmax (softmax.cuh), P·V with its
// accumulation's merge (pv.cuh), epilogue (epilogue.cuh); Q's quantization in
// quantize/q_int8.cuh, the mask in common/mask.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../common/attention_launch.h"
#include "../common/attention_sequence.cuh"
#include "../common/device_primitives.cuh"
#include "../common/mask.h"
#include "../common/workspace.h"
#include "../quantize/q_int8.cuh"
#include "config.cuh"
#include "epilogue.cuh"
#include "loads.cuh"
#include "pv.cuh"
#include "qk.cuh"
#include "sageattn/sageattn.h"
#include "softmax.cuh"

namespace sageattn::detail {

// kVarlen: a packed batch of sequences (sageattn.h: Varlen); a separate instantiation, so that
// dense calls keep the call's lengths in kernel parameters (attention_sequence.cuh).
template <int D, PvPath PATH, typename VT, PvAccum ACC, bool kVarlen>
__global__ void __launch_bounds__(128, (AttentionConfig<D, PATH, VT, ACC>::kMinCtasPerSm))
    attention_kernel(const AttentionArgs a) {
  using Cfg = AttentionConfig<D, PATH, VT, ACC>;
  constexpr int kMTiles = Cfg::kMTiles;
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned char* s_q = smem;
  unsigned char* s_k = smem + Cfg::kQBytes;
  unsigned char* s_v = s_k + 2 * Cfg::kKBytes;

  // Longest rows first where the mask gives the last rows the most key blocks.
  const int m_block = KeyMask::last_rows_longest(a.mask) ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
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
  const KeyMask mask = KeyMask::of_sequence(a.mask, seq.q_len, seq.kv_len);
  // The CTA's last row that exists in the padded Q (its tile may reach past it).
  const int q_pad = kVarlen ? (seq.q_len + kBlockM - 1) / kBlockM * kBlockM : a.q_pad;
  const int n_blocks = mask.key_blocks(kBlockN, min(m0 + Cfg::kCtaRows, q_pad) - 1);

  const std::int8_t* k_base = a.k + seq.ws_row0(a) * D;

  // Q: this warp's rows of the caller's 16-bit Q, requested first (quantize_q.cuh), quantized
  // into the Q tile once the first K and V tiles are on their way.
  uint4 q_raw[kQLoads<D, Cfg::kRowsPerWarp>];
  load_q_rows<D, Cfg::kRowsPerWarp>(a, seq, head, warp_row0, lane, q_raw);

  // ---- stage "load" (mma/loads.cuh): K and V tiles, double-buffered ----
  auto load_kv = [&](int block, int stage) {
    load_kv_block<Cfg>(a, seq, kv_head, k_base, s_k, s_v, block, stage, tid);
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
  unsigned qa[kMTiles][Cfg::kQSlots][4];

  // Q's fragments, where they stay in registers, are loaded once: by the first block after its
  // barrier, or with peeled blocks before the loops (each warp reads the rows it wrote itself,
  // so its own barrier orders them; NOTES: mma-peel-masked).
  auto load_q = [&] {
#pragma unroll
    for (int ks = 0; ks < D / 32; ++ks)
      load_q_fragments<Cfg>(qa, s_q, warp, lane, ks, ks);
  };
  if constexpr (Cfg::kQInRegisters && Cfg::kPeeledBlocks) {
    __syncwarp();
    load_q();
  }

  // One key block. first and masked are bools, or (Cfg::kPeeledBlocks) std::bool_constant: then
  // the masked blocks (a suffix: common/mask.h) are a loop of their own, and the one before them
  // tests no key.
  auto block = [&](int nb, auto first, auto masked) __attribute__((always_inline)) {
    const int stage = nb & 1;
    device::double_buffer_step(nb, n_blocks, load_kv);
    if (Cfg::kQInRegisters && first) load_q();

    // ---- stage "Q·Kᵀ" (mma/qk.cuh) ----
    int s[kMTiles][Cfg::kNTiles][4];
    qk_scores<Cfg>(s, qa, s_q, s_k + stage * Cfg::kKBytes, warp, lane);

    // ---- stage "softmax" (mma/softmax.cuh), with O's rescale where the accumulation wants it
    // before P·V ----
    const int n0 = nb * kBlockN;
    float k_scale[Cfg::kGroups];
#pragma unroll
    for (int i = 0; i < Cfg::kGroups; ++i)
      k_scale[i] = k_scales[(n0 + 16 * i) >> k_shift];
    auto visible = [&](int mt, int j, int e) {
      const int key = n0 + j * 8 + 2 * t + (e & 1);
      const int row = warp_row0 + 16 * mt + g + (e >> 1) * 8;
      return mask.visible(key, row);
    };
    unsigned pa[kMTiles][Cfg::kPChunks][4];
    float scale_old[kMTiles][2];
    softmax_stage<Cfg>(s, q_scale, k_scale, masked(n0), visible, row_max, row_sum, scale_old, o,
                       pa);

    // ---- stage "P·V", summed and merged as the accumulation says (mma/pv.cuh) ----
    accumulate_pv<Cfg>(o, pa, s_v + stage * Cfg::kVBytes, lane, scale_old);
    __syncthreads();  // every warp is done with this stage before it is refilled
  };
  if constexpr (Cfg::kPeeledBlocks) {
    const int n_unmasked = mask.unmasked_key_blocks(n_blocks, kBlockN, m0);
    auto always = [](int) { return std::true_type{}; };
    auto never = [](int) { return std::false_type{}; };
    int nb = 0;
    for (; nb < n_unmasked; ++nb)
      block(nb, std::false_type{}, never);
    for (; nb < n_blocks; ++nb)
      block(nb, std::false_type{}, always);
  } else {
    auto block_masked = [&](int n0) { return mask.block_masked(n0, kBlockN, m0); };
    for (int nb = 0; nb < n_blocks; ++nb)
      block(nb, nb == 0, block_masked);
  }
  device::cp_async_wait<0>();

  // ---- stage "epilogue" (mma/epilogue.cuh) ----
  write_attention_output<Cfg>(a, seq, head, warp_row0, lane, o, row_max, row_sum, row_km);
  if (a.sharp_count != nullptr) vote_sharp_tiles<Cfg>(a, seq, head, m0, warp_row0, tid, row_max, o);
}

template <int D, PvPath PATH, typename VT, PvAccum ACC>
cudaError_t launch_attention(const AttentionArgs& args, int batch, cudaStream_t stream) {
  // A head dim SAGEATTN_HEAD_DIMS left out (common/attention_launch.h): no kernel compiled.
  if constexpr (kHeadDimLeftOut) {
    return cudaErrorNotSupported;
  } else {
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
}

}  // namespace sageattn::detail
