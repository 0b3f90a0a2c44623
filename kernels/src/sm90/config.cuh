// The Hopper kernel's compile-time shape (attention_sm90.cuh): per head dim, P·V type and
// consumer count, from its row of the manifest's tables (common/tile_config.h), the tile sizes,
// register split, stages and shared-memory layout (Sm90Config); the kernel's one parameter
// (Sm90Args). Which consumer count a call gets is the tile policy's (common/tile_policy.h),
// which the host reference follows too.
#pragma once

#include <cstdint>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <type_traits>

#include "../common/attention_launch.h"
#include "../common/attention_sequence.cuh"
#include "../common/tile_policy.h"

// Consumer warpgroups (tile_policy.h: the manifest's SM90_TILES rows and the rule): with 3, a
// CTA owns 192 query rows, each consumer thread gets 160 registers, and a 16-bit turn retires its
// P·V before it issues Q·Kᵀ (as the e4m3 one does for its merge), so that P's fragments and the
// next S can share registers. At d=128 they fit only with 64-key blocks (S 32 registers, not 64).
// With 4 (d=64, 16-bit P·V only): 256-row tiles, 112 registers, 64-key blocks.

namespace sageattn::detail {

// PvT: P·V's type. __nv_fp8_e4m3 (the fp8_sm90 path): V quantized per channel, two-level FP32
// accumulation. half or __nv_bfloat16 (the fp16_sm90 path): V as the caller gave it, P in the
// same type, accumulated straight into O (16-bit wgmma accumulates in full FP32).
// kVarlenCall: a packed batch of sequences (sageattn.h: Varlen), a separate instantiation
// (attention_sequence.cuh).
// D = 192 and 256 (16-bit P·V, two consumers, 64-key blocks): Q's and K's rows are wider than
// the 128-byte swizzle, so their tiles are stored in boxes (device::boxed_offset): three of 64
// bytes at d=192, two of 128 at d=256; P·V at d=256 (N = 264, past wgmma's 256) is issued in two
// parts of 128 and 136 columns. D = 96 (16-bit P·V, two consumers, 128-key blocks): Q and K in
// three boxes of 32 bytes; V and O are 128 channels wide (kDv), the last 32 zeros (the TMA fills
// them), since V's 64-channel boxes hold no place for the ones columns at 96.
template <int D, typename PvT, int kConsumerWarpgroups, bool kVarlenCall = false>
struct Sm90Config {
  static constexpr bool kPv8 = std::is_same_v<PvT, __nv_fp8_e4m3>;
  static_assert(kPv8 || std::is_same_v<PvT, half> || std::is_same_v<PvT, __nv_bfloat16>,
                "P·V in e4m3, fp16 or bf16");
  static_assert(path_supports_head_dim(kPv8 ? PvPath::fp8_sm90 : PvPath::fp16_sm90, D),
                "a head dim the path is built for (kernels/manifest.py)");
  static_assert(sm90_has_tile(D, kPv8, kConsumerWarpgroups),
                "a shape the manifest's SM90_TILES has");
  // Its row of the manifest's SM90_TILES and HEAD_DIM_SHAPES (tile_config.h).
  static constexpr Sm90Tile kTile = kSm90Tile<D, kPv8, kConsumerWarpgroups>;
  static constexpr int kD = D;
  static constexpr int kDv = kHeadDimShape<D>.v_channels;  // V's and O's channels as computed
  static constexpr bool kVarlen = kVarlenCall;
  using Pv = PvT;
  static constexpr int kConsumers = kConsumerWarpgroups;  // of 64 rows each
  static constexpr int kBlockM = 64 * kConsumers;
  static constexpr int kBlockN = kTile.key_block;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  // 16-bit with 3 or 4 consumers: P·V(nb-1) retires inside the turn, before Q·Kᵀ(nb) is issued.
  // (At d=128, P·V and Q·Kᵀ issued together and retired after the turn measured the same:
  // kernels/NOTES.md, sm90-d128-pv16-three-consumers.)
  static constexpr bool kPvRetiresInTurn = !kPv8 && kConsumers >= 3;
  static constexpr int kStages = kTile.stages;
  static constexpr bool kPingPong = SAGEATTN_SM90_PINGPONG != 0;
  // How many of the S tile's column groups (4 scores each per thread) take their exp2 from a
  // polynomial on the FMA pipe (exp2_fma.h) instead of the MUFU unit, spread evenly over the tile:
  // the MUFU would otherwise be as busy as the tensor cores at d=128.
  static constexpr int kFmaExp2Groups = kTile.fma_exp2_groups;
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = kConsumers == 2 ? 240 : kConsumers == 3 ? 160 : 112;
  // The consumers' claim beyond the launch's allocation (64K over the threads, in steps of 8)
  // must fit in what the producer releases: setmaxnreg.inc waits for the registers the CTA's
  // setmaxnreg.dec gave back (four consumers claiming 120 each, 3,072 more than that, hung).
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  static_assert(kConsumers * (kConsumerRegisters - kLaunchRegisters) <=
                    kLaunchRegisters - kProducerRegisters,
                "the consumers' registers come from the producer's");
  // The 16-bit path's row-max headroom (tile_policy.h): O is rescaled only when a row's max moved
  // by more than it. The e4m3 path scales P to 448 and needs the exact max.
  static constexpr float kMaxHeadroom = kPv8 ? 0.f : kMmaMaxHeadroom;
  // Q and K rows are D int8 bytes: 128-byte rows swizzle by 128, 64-byte rows by 64; 256-byte
  // rows are two boxes of 128 bytes (device::boxed_offset), each swizzled by 128, 192-byte rows
  // three of 64, 96-byte rows three of 32.
  static constexpr int kQKBoxBytes = D % 128 == 0 ? 128 : D % 64 == 0 ? 64 : 32;
  static constexpr int kQKSwizzle = kQKBoxBytes;
  static constexpr int kQBytes = kBlockM * D;
  static constexpr int kKBytes = kBlockN * D;
  // V, e4m3: D rows of kBlockN = 128 keys (128-byte swizzle), then 8 rows of e4m3 ones
  // (written once). V, 16-bit: kBlockN rows (keys) of kDv channels as the caller laid them out, in
  // kDv/64 boxes of 64 channels (128 swizzled bytes per key; at d=96 the TMA fills channels 96-127
  // with zeros), then a further 64-channel block of ones (written once). Either way P·V with
  // N = kDv + 8 leaves P's row sums in the accumulator's last 8 columns. (A separate N = 8 wgmma
  // per k-step against a tile of ones was slower at d=128: kernels/NOTES.md, sm90-pv16-path.)
  static constexpr int kVSwizzle = kBlockN;
  static constexpr int kVRows = kDv + 8;
  static constexpr int kVBoxBytes = kBlockN * 128;  // 16-bit: one box of 64 channels
  // What the TMA brings (out-of-bounds channels count: it writes their zeros).
  static constexpr int kVLoadBytes = kDv * kBlockN * (kPv8 ? 1 : 2);
  static constexpr int kVBytes = kPv8 ? kVRows * kBlockN : (kDv / 64 + 1) * kVBoxBytes;
  // O's accumulator registers per thread (with the row sums' 4), and P·V's k-steps per
  // key block (k = 32 for e4m3, 16 for 16-bit types).
  static constexpr int kOFloats = kVRows / 2;
  static constexpr int kPvSteps = kBlockN / (kPv8 ? 32 : 16);
  // Q·Kᵀ k-step ks (32 INT8 channels) of a Q or K tile of `tile_rows` rows: its byte offset in
  // the tile, a box's first bytes (boxed_offset's layout; one box below d=256).
  static constexpr int qk_step_offset(int ks, int tile_rows) {
    return ks * 32 / kQKBoxBytes * (tile_rows * kQKBoxBytes) + ks * 32 % kQKBoxBytes;
  }
  static constexpr int kQOffset = 0;
  static constexpr int kKOffset = kQOffset + kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKBytes;
  static constexpr int kBarrierOffset = kVOffset + kStages * kVBytes;
  static constexpr int kBarriers = 3 * kStages;  // k_full, v_full, empty per stage
  // K's scales of each stage's block: one per 16-key column group of the S tile (8 floats),
  // written by the producer beside the TMA's K tile.
  static constexpr int kKScaleOffset = (kBarrierOffset + kBarriers * 8 + 15) / 16 * 16;
  static constexpr int kScaleGroups = kBlockN / 16;
  static constexpr int kKScaleBytes = kStages * kScaleGroups * 4;
  // Q's quantization (quantize/q_int8.cuh): per row sm_scale·(q · mean(K)) for the LSE, and per
  // warp its rows' max |q| (per_block scales take the warpgroup's).
  static constexpr int kQAuxOffset = kKScaleOffset + kKScaleBytes;
  static constexpr int kQAuxBytes = (kBlockM + 4 * kConsumers) * 4;
  // +1024: the dynamic shared memory base is aligned up to the swizzle pattern's 1024 bytes.
  static constexpr int kSmemBytes = kQAuxOffset + kQAuxBytes + 1024;
  static_assert(kKOffset % 1024 == 0 && kVOffset % 1024 == 0 && kKBytes % 1024 == 0 &&
                    kVBytes % 1024 == 0,
                "swizzled tiles start on 1024-byte boundaries");
};

// The kernel's one parameter: the tensor maps must live in parameter space (__grid_constant__)
// for the TMA to read them.
struct Sm90Args {
  CUtensorMap k_map, v_map;
  AttentionArgs a;
};

// What a CTA's set-up works out (attention_sm90.cuh), which both roles read: its shared-memory
// tiles and barriers, its (batch, head) and query rows, the key blocks it visits.
template <bool kVarlen>
struct Sm90Cta {
  const Sm90Args& args;
  unsigned char* smem;  // the dynamic shared memory, aligned to 1024 bytes
  unsigned char* s_q;
  unsigned char* s_k;
  unsigned char* s_v;
  std::uint64_t* k_full;  // [kStages]: K (and its staged scales) landed
  std::uint64_t* v_full;  // [kStages]: V landed
  std::uint64_t* empty;   // [kStages]: every consumer warp released the stage
  float* s_kscale;        // [kStages][kScaleGroups]
  int head, batch, kv_head;
  AttentionSequence<kVarlen> seq;  // its rows, lengths, workspace place and statistics
  KeyMask mask;                    // which keys its rows see (common/mask.h)
  int n_blocks, n_unmasked;        // key blocks visited; those before n_unmasked need no mask
  int first_round;                 // blocks whose stages start free (requested at set-up)
  int warp, lane;
  int warp_row0;  // a consumer warp's first query row
  const float* k_scales;
  int cta_id;  // SAGEATTN_SM90_TRACE only
};

}  // namespace sageattn::detail
