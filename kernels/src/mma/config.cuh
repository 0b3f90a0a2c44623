// The mma.sync kernel's compile-time shape (mma/attention.cuh): rows per warp and CTA, the
// tiles' bytes in shared memory, P's scale, and the register budget's launch bounds.
#pragma once

#include <cuda_fp16.h>
#include <type_traits>

#include "../common/attention_launch.h"
#include "../common/tile_policy.h"
#include "sageattn/sageattn.h"

namespace sageattn::detail {

template <int D, PvPath PATH, typename VT, PvAccum ACC = PvAccum::fp32>
struct AttentionConfig {
  static_assert(path_supports_head_dim(PATH, D) && !is_sm90_path(PATH),
                "an mma.sync path and a head dim it is built for (kernels/manifest.py)");
  // The instantiation, for the stages (mma/attention.cuh) to read: the P·V path, its V type and
  // its accumulation (the policy mma/pv.cuh implements).
  static constexpr PvPath kPath = PATH;
  static constexpr PvAccum kAccum = ACC;
  using VType = VT;
  static constexpr int kHeadDim = D;
  static constexpr int kThreads = 128;
  // Query rows per warp, in m16 tiles, from the manifest's MMA_TILES (tile_config.h): each K and
  // V fragment read from shared memory feeds kMTiles mma tiles.
  static constexpr int kMTiles = kMmaTile<PATH, D>.m_tiles;
  // The masked key blocks as a loop of their own (attention.cuh), where the manifest's row asks.
  static constexpr bool kPeeledBlocks = kMmaTile<PATH, D>.peeled_blocks != 0;
  // CTAs per SM the register allocation aims for (128 threads each): the knob
  // SAGEATTN_MIN_CTAS_PER_SM where set, else the manifest's row for FP32 sums (FP16 block sums
  // fit their registers without it, and spill with it); 0 gives ptxas no minimum.
  static constexpr int kMinCtasPerSm = SAGEATTN_MIN_CTAS_PER_SM > 0 ? SAGEATTN_MIN_CTAS_PER_SM
                                       : ACC == PvAccum::fp32 ? kMmaTile<PATH, D>.min_ctas_per_sm
                                                              : 0;
  static_assert(kMTiles == 1 || kMTiles == 2, "16 or 32 rows per warp");
  static constexpr int kRowsPerWarp = 16 * kMTiles;
  static constexpr int kCtaRows = 4 * kRowsPerWarp;
  // Q's fragments (kMTiles·D/8 words) stay in registers unless that makes O, S and Q spill
  // (more than 128 channel-rows: D = 128 at 32 rows per warp, D = 256); then they are read from
  // shared memory at each key block.
  static constexpr bool kQInRegisters = kMTiles * D <= 128;
  static constexpr int kQSlots = kQInRegisters ? D / 32 : 1;  // k-steps of Q's fragments held
  static constexpr int kDTiles = D / 8;                       // n8 tiles of the output
  static constexpr int kNTiles = kBlockN / 8;                 // n8 tiles of S
  static constexpr int kGroups = kBlockN / 16;  // pairs of n8 tiles: keys that share a K scale
  // P's A fragments per key block: 32-key chunks on the fp8 path, 16-key ones on the fp16 path.
  static constexpr int kPChunks = PATH == PvPath::fp8 ? kBlockN / 32 : kBlockN / 16;
  static constexpr int kQBytes = kCtaRows * D;
  static constexpr int kKBytes = kBlockN * D;
  static constexpr int kVBytes = PATH == PvPath::fp8 ? D * kBlockN : kBlockN * D * 2;
  // Q's quantization (quantize/q_int8.cuh): per row sm_scale·(q · mean(K)) for the LSE, and per
  // warp its rows' max |q| (per_block scales take the block's).
  static constexpr int kQAuxOffset = kQBytes + 2 * kKBytes + 2 * kVBytes;
  static constexpr int kSmemBytes = kQAuxOffset + (kCtaRows + 4) * 4;
  // log2 of the factor P is computed with: 448 (e4m3's largest value) on the fp8 path, so that
  // P uses e4m3's whole range; the row sums carry it too, so it cancels in O = P·V / sum.
  static constexpr float kLog2PScale = PATH == PvPath::fp8 ? kLog2Fp8Max : 0.f;
  // Whether each key block's P·V is summed apart and then merged into O in FP32 (O's rescale
  // riding on the merge): the fp8 path, and FP16 block sums on the 16-bit one.
  static constexpr bool kBlockSums = PATH == PvPath::fp8 || ACC == PvAccum::fp16_block;
  // The 16-bit P·V path's P type: the input's, or FP16 where the block's sum is (the
  // FP16-accumulating mma takes f16 operands; V's bf16 fragments are converted to match).
  using PType = std::conditional_t<ACC == PvAccum::fp16_block, half, VT>;
  // 16-bit P·V path: the subtracted row max moves only when a block's max exceeds it by more
  // than this (log2 units; P ≤ 2^kMaxHeadroom, far inside fp16 and bf16), so that most blocks
  // skip O's rescale (2·D multiplies per row pair; kernels/NOTES.md, mma-max-headroom). 0: the
  // exact running max, O rescaled per block. The fp8 path scales P to e4m3's 448 and needs the
  // exact max, and so do FP16 block sums: with P ≤ 1 a block's sum stays inside FP16 for
  // |v| < 1,024 (accumulation_may_overflow), with P ≤ 2^headroom only for |v| < 4.
  static constexpr float kMaxHeadroom = kBlockSums ? 0.f : kMmaMaxHeadroom;
  // The quantization's scale groups (kWarpRows rows, or kBlockM per block) never straddle an
  // m16 tile, and a CTA's tile is a whole number of the workspace's padding (kBlockM).
  static_assert(kWarpRows == 16 && kCtaRows % kBlockM == 0);
};

}  // namespace sageattn::detail
