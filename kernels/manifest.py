"""The kernel library's facts, decided here once: which attention kernels exist (P·V path, head
dims, types), and the numbers the C++ API, the C API, the torch bindings and the Python package
must agree on. kernels/generate_instantiations.py writes every copy from it:

  include/sageattn/manifest.h         the public enums and constants, path_name and
                                      path_supports_head_dim (sageattn.h includes it)
  src/dispatch.h                      the launch of each (path, type, head dim) instantiation
  src/instantiations/*.cu             one translation unit per instantiation
  python/sageattention/_manifest.py   the Python package's numbers (core.py imports them)
  src/common/tile_config.h            the kernels' shapes per head dim (HEAD_DIM_SHAPES,
                                      MMA_TILES, SM90_TILES) and the tuning knobs (KNOBS)
  src/sm90/wgmma_ops.cuh              the wgmma wrappers the Hopper tiles issue

A new head dim is a row in each table below (and its kernel, where the shape is new): edit here,
run `python3 kernels/generate_instantiations.py`, commit what it writes; the test
`kernels.generated` (`generate_instantiations.py --check`) fails when the two differ. What each
GPU lacks (capability_gap) and where FP8 mma.sync is native are generated from the paths'
capability fields into manifest.h and _manifest.py alike; which path a GPU and a length get is
pv_path_for in sageattn.h (and plan.path_for_capability), over these facts.
"""
from typing import NamedTuple


class Path(NamedTuple):
    name: str
    kernel: str            # "mma" (mma.sync, sm80 and later) or "sm90" (wgmma, sm_90a only)
    pv: str                # P·V's type: "e4m3" (V quantized) or "16bit" (the input's type)
    head_dims: tuple       # the head dims its kernels are built for
    doc: str
    # The P·V accumulations its kernels are built with: (ACCUMULATIONS name, the name callers
    # pass as pv_accum_dtype, upstream SageAttention's for the same arithmetic[, the head dims it
    # is built for, where not all the path's]); the first is the path's default, at every head
    # dim.
    accumulations: tuple = (("fp32", "fp32"),)
    # The GPUs its kernels run on: compute capability from `min_capability` (below it, the
    # CAPABILITY_GAPS name `below_min_gap`), only `only_capability` where set (elsewhere
    # "hopper_only"), and only in a library built with sm_90a code where `needs_sm90a`.
    min_capability: tuple = (8, 0)
    below_min_gap: str = "below_sm80"
    only_capability: object = None
    needs_sm90a: bool = False

    def accumulation_head_dims(self, accumulation):
        """The head dims the path's kernels are built for with `accumulation` (an ACCUMULATIONS
        name it has)."""
        entry = next(a for a in self.accumulations if a[0] == accumulation)
        return entry[2] if len(entry) > 2 else self.head_dims


class Accumulation(NamedTuple):
    name: str
    doc: str


# How P·V's products are summed, in PvAccum order (the C API's and the bindings' numbers:
# append, never reorder). Which path has which is Path.accumulations.
ACCUMULATIONS = (
    Accumulation("fp32", "in FP32: on the FP8 paths each key block's P·V in a fresh FP32 "
                 "accumulator added into O (two-level), on the 16-bit paths straight into O."),
    Accumulation("fp16_block", "each key block's P·V in FP16 (the FP16-accumulating mma, twice "
                 "the FP32 one's rate on GeForce cards), added into FP32 O. FP8 paths: V's scale "
                 "maps max|v| to 2.25 rather than 448, so that a block's sum stays inside FP16 "
                 "(FP8_V_MAX). 16-bit paths: P and V in FP16 (bf16 V converted), P ≤ 1; a tile "
                 "whose block sum leaves FP16 (|v| from 1,024) is computed again with FP32 sums."),
)


# The input types, in DType order (the C API's and the bindings' numbers).
DTYPES = ("f16", "bf16")

# The P·V paths, in PvPath order: these are the C API's and the bindings' path numbers, so
# append, never reorder. Q·Kᵀ is always INT8 with int32 accumulation.
PATHS = (
    Path("fp16", "mma", "16bit", (64, 128, 256),
         "mma.sync; P and V in the input's 16-bit type (sm80 and later).",
         # FP16 block sums up to d=128, as upstream's 16-bit kernels (which stop there): d=256
         # sums in FP32.
         (("fp32", "fp32"), ("fp16_block", "fp16+fp32", (64, 128)))),
    Path("fp8", "mma", "e4m3", (64, 128),
         "mma.sync; P and V in FP8 e4m3 with a per-channel V scale, each key block accumulated "
         "apart and added into FP32 (sm89 and later: Ada, Hopper, Blackwell).",
         (("fp32", "fp32+fp32"), ("fp16_block", "fp32+fp16")),
         min_capability=(8, 9), below_min_gap="fp8_needs_sm89"),
    Path("fp8_sm90", "sm90", "e4m3", (64, 128),
         "the Hopper kernel: the fp8 path's algorithm on wgmma with TMA and warp specialisation "
         "(compute capability 9.0, a library built for sm_90a).",
         (("fp32", "fp32+fp32"),), only_capability=(9, 0), needs_sm90a=True),
    Path("fp16_sm90", "sm90", "16bit", (64, 96, 128, 192, 256),
         "the Hopper kernel with the fp16 path's P·V: P and V in the input's 16-bit type (V read "
         "as the caller laid it out), accumulated in FP32 (same requirements).",
         only_capability=(9, 0), needs_sm90a=True),
)

# Rows that share one INT8 scale, in Granularity order: per_block = 64 rows (one CTA tile),
# per_warp = 16 rows.
GRANULARITIES = ("per_block", "per_warp")

# The tensor layouts the torch operators take, in the bindings' numbers: HND = [batch, heads,
# seq, head_dim], NHD = [batch, seq, heads, head_dim] (the library itself takes strides).
LAYOUTS = ("HND", "NHD")

# Why a path cannot run on a GPU, in CapabilityGap order (capability_gap, generated into
# manifest.h and _manifest.py from the paths' capability fields).
CAPABILITY_GAPS = ("none", "below_sm80", "fp8_needs_sm89", "hopper_only", "no_sm90a_code")

# The compute capability every kernel needs.
MIN_CAPABILITY = (8, 0)

# Where mma.sync has native e4m3 tensor instructions (QMMA): Ada (8.9) and, from 10.0, Blackwell.
# Elsewhere (Hopper) nvcc lowers e4m3 mma.sync to an f16 unpack plus HMMA, so the 16-bit path
# is faster and more accurate there (pv_path_for).
FP8_MMA_NATIVE = ((8, 9),)
FP8_MMA_NATIVE_FROM = (10, 0)

# The query heads one call takes: the kernels' grids hold them in their y dimension, which CUDA
# limits to 65,535 (the Python package calls larger ones in slices).
MAX_QUERY_HEADS = 65535

# Query lengths up to which Hopper takes the 16-bit P·V wgmma kernel (fp16_sm90) rather than the
# FP8 one: it meets the accuracy bar that FP8 P·V misses (docs/kernels.md, "Accuracy").
HOPPER_PV16_MAX_QUERY_LEN = 8192

# The sharp-tile guard's default threshold, in logits (sm_scale·q·k after K's smoothing): a tile
# with a row whose largest logit exceeds it is recomputed with 16-bit Q·Kᵀ. INT8 Q·Kᵀ keeps a
# cosine of 0.9986 to float64 at a largest logit of 84 and falls to 0.975 as rows become one-hot
# (docs/kernels.md, "Sharp attention").
SHARP_THRESHOLD = 100.0

# What V's per-channel FP8 scale maps max|v| to, per accumulation: e4m3's largest value (448)
# for FP32 sums; for FP16 block sums the largest that keeps a 64-key block's sum of P·V (P ≤ 448)
# inside FP16's 65,504 (64·448·2.25 = 64,512), as upstream's SageAttention2++ does.
FP8_V_MAX = {"fp32": 448.0, "fp16_block": 2.25}

# The compute capabilities where sageattn sums P·V's key blocks in FP16 (fp16_block) on the
# mma.sync paths that have it: Ampere GeForce (8.6), Ada (8.9) and consumer Blackwell (12.0, 12.1),
# whose GeForce parts run the FP16-accumulating mma at twice the FP32-accumulating one's rate
# (NVIDIA's Ampere and Ada whitepapers: RTX 3090 FP16 142 vs 71 dense TFLOPS, RTX 4090 FP8 660 vs
# 330). Its accuracy matches FP32 sums on the float64 suite (docs/kernels.md, "Accumulation");
# elsewhere, and on the Hopper kernel, P·V sums in FP32.
FP16_BLOCK_CAPABILITIES = ((8, 6), (8, 9), (12, 0), (12, 1))

# Derived: every head dim some path takes (others are padded up by the caller), the largest one
# of the FP8 P·V paths, and those only the Hopper kernel takes.
SUPPORTED_HEAD_DIMS = tuple(sorted({d for p in PATHS for d in p.head_dims}))
FP8_PV_MAX_HEAD_DIM = max(d for p in PATHS if p.pv == "e4m3" for d in p.head_dims)
HOPPER_ONLY_HEAD_DIMS = tuple(
    d for d in SUPPORTED_HEAD_DIMS if all(p.kernel == "sm90" for p in PATHS if d in p.head_dims))
# The sharp-tile kernel (src/guard/sharp_redo.cuh) redoes tiles of every path: every head dim,
# both input types.
SHARP_HEAD_DIMS = SUPPORTED_HEAD_DIMS


class Knob(NamedTuple):
    """A tuning value a measurement may override at compile time (-DSAGEATTN_<name>=<value>):
    the table cells below that name it take its value. kernels/NOTES.md has what each measured."""
    name: str
    default: int
    doc: str


KNOBS = (
    Knob("MMA_MTILES", 2, "mma.sync: query rows per warp in m16 tiles, where a path's "
         "MMA_TILES row names this knob: each K and V fragment read from shared memory feeds that many mma tiles "
         "(NOTES: version 7)."),
    Knob("MIN_CTAS_PER_SM", 0, "mma.sync: above 0, the CTAs per SM every kernel's launch bounds "
         "ask registers for, in place of the MMA_TILES rows' min_ctas_per_sm (3 caps registers at "
         "168: NOTES, mma-launch-bounds-168)."),
    Knob("MMA_MAX_HEADROOM", 8, "mma.sync 16-bit P·V with FP32 sums: the row max moves only when a "
         "block's max exceeds it by more than this, in log2 units (NOTES: mma-max-headroom)."),
    Knob("SM90_STAGES", 3, "Hopper: shared-memory stages of K and V with 128-key blocks."),
    Knob("SM90_STAGES_N64", 4, "Hopper: stages with 64-key blocks (half the bytes per stage)."),
    Knob("SM90_STAGES_D256", 3, "Hopper, d=256: 56 KB per stage (K 16 KB, V with its ones 40 KB) "
         "beside a 32 KB Q tile."),
    Knob("SM90_PINGPONG", 1, "Hopper: the consumer warpgroups take turns (ping-pong)."),
    Knob("SM90_CONSUMERS_D64", 0, "Hopper, d=64: consumer warpgroups 2, 3 or 4 (4 with 16-bit P·V "
         "only, else 3), or 0 for the tile policy's rule (NOTES: sm90-d64-three-consumers, "
         "sm90-d64-four-consumers)."),
    Knob("SM90_CONSUMERS_D128", 0, "Hopper, d=128: 2 or 3 (16-bit P·V only), or 0 for the rule "
         "(NOTES: sm90-d128-pv16-three-consumers)."),
    Knob("SM90_FMA_EXP2_D64", 4, "Hopper: of an S tile's column groups (4 scores each per thread), "
         "how many take exp2 from the FMA pipe's polynomial rather than the MUFU (exp2_fma.h), at "
         "d=64 with two consumers; the best share moves whenever the softmax's other instructions "
         "change (NOTES: sm90-exp2-polynomial, sm90-kscale-in-smem)."),
    Knob("SM90_FMA_EXP2_D64_C3", 0, "... at d=64 with three: the FMA pipe is the busier one there "
         "(NOTES: sm90-exp2-share-d64-c3)."),
    Knob("SM90_FMA_EXP2_D64_C4", 0, "... at d=64 with four (64-key blocks: 8 column groups)."),
    Knob("SM90_FMA_EXP2_D128", 1, "... at d=96 and 128 with two."),
    Knob("SM90_FMA_EXP2_D128_C3", 0, "... at d=128 with three (64-key blocks)."),
    Knob("SM90_FMA_EXP2_D256", 0, "... at d=192 and 256: the tensor cores' work per score leaves "
         "the MUFU room."),
    Knob("SM90_TRACE", 0, "Hopper, measurement only: 1 stamps the SM clock at each turn's phases "
         "(sm90/trace.cuh; lab/trace/sm90_trace.sh)."),
    Knob("QUANT_THREADS_D64", 128, "Quantization: threads per CTA at d=64; 4 CTAs of 4 warps per "
         "SM measured faster at every length (NOTES: quant-mean-in-smem)."),
    Knob("QUANT_THREADS_D128", 256, "... at d=128: 8 warps; 4 were as fast up to 4k tokens per "
         "head and slower beyond."),
    Knob("QUANT_MIN_BLOCKS_256", 4, "Quantization: CTAs of 256 threads per SM the plain queue's "
         "registers must allow (a few dozen bytes then spill to L1, measured faster than 2 CTAs "
         "per SM without: NOTES quant-persistent-cp-async)."),
)


# A cell of the tables below: a number, or a KNOBS name whose value it takes.
class HeadDimShape(NamedTuple):
    """What every kernel family needs of a head dim."""
    head_dim: int
    v_channels: int      # V's and O's channels as the Hopper and sharp-tile kernels hold them
    #                      (d=96: 128, the last 32 zeros; 64-channel boxes leave no room else)
    quant_threads: object  # quantization CTA threads: 128 or 256 (a job's warps x 8 loads)
    sharp_keys: int      # the sharp-tile kernel's key block (O takes D/2 floats per thread)
    sm90_consumers: object = 0  # the knob forcing the Hopper kernel's consumer count, or 0


class MmaTile(NamedTuple):
    """The mma.sync kernel's shape per (path, head dim)."""
    path: str
    head_dim: int
    m_tiles: object      # query rows per warp in m16 tiles: 1 or 2
    # 1: the main loop's masked blocks (a suffix) are a loop of their own, so the one before it
    # tests no key (NOTES: mma-peeled-blocks, mma-peel-masked)
    peeled_blocks: object = 0
    # CTAs per SM the launch bounds ask registers for with FP32 sums (0: no minimum; the knob
    # MIN_CTAS_PER_SM, when set, overrides every row)
    min_ctas_per_sm: object = 0


class Sm90Tile(NamedTuple):
    """One Hopper kernel shape: per (head dim, P·V type, consumer warpgroups). Two consumers is
    every head dim's base; the tile policy (common/tile_policy.h) takes 3 or 4 where a row
    exists."""
    head_dim: int
    pv: str              # "e4m3" or "16bit"
    consumers: int       # warpgroups of 64 query rows
    key_block: int       # keys per main-loop block (the S tile's width)
    stages: object       # shared-memory stages of K and V
    fma_exp2_groups: object  # S's column groups whose exp2 runs on the FMA pipe


HEAD_DIM_SHAPES = (
    # At d=256 a job's 64 rows hold a per_block scale's rows whole with 8 warps.
    HeadDimShape(64, 64, "QUANT_THREADS_D64", 64, "SM90_CONSUMERS_D64"),
    HeadDimShape(96, 128, 256, 64),
    HeadDimShape(128, 128, "QUANT_THREADS_D128", 64, "SM90_CONSUMERS_D128"),
    HeadDimShape(192, 192, 256, 32),
    HeadDimShape(256, 256, 256, 32),
)

MMA_TILES = (
    # d=256: O alone is 128 floats per m16 tile and thread. FP8 P·V at d=64: 64-row CTAs, twice
    # as many per SM, hide its latencies better than two tiles' halved shared-memory reads gain
    # (NOTES: mma-fp8-d64-one-mtile), four of them where registers are capped for it
    # (mma-fp8-d64-four-ctas). Peeled blocks pay at d=64 and, on the 16-bit path, at d=128 (FP8
    # P·V at d=128 loses short causal calls with them: NOTES, mma-peel-masked, mma-fp8-d64-peel).
    MmaTile("fp16", 64, "MMA_MTILES", 1),
    MmaTile("fp16", 128, "MMA_MTILES", 1),
    MmaTile("fp16", 256, 1),
    MmaTile("fp8", 64, 1, 1, 4),
    MmaTile("fp8", 128, "MMA_MTILES"),
)

SM90_TILES = (
    # Three consumers (192-row tiles, 160 registers each) at d=64 and, 16-bit P·V only, at d=128,
    # where O, S and P fit only with 64-key blocks; e4m3 P·V's second-level accumulator does not
    # fit there (NOTES: sm90-d128-e4m3-three-consumers). Four (256-row tiles, 112 registers) at
    # d=64 with 16-bit P·V. d=192 and 256: two, whose 240 registers hold O beside a 64-key S tile.
    Sm90Tile(64, "e4m3", 2, 128, "SM90_STAGES", "SM90_FMA_EXP2_D64"),
    Sm90Tile(64, "e4m3", 3, 128, "SM90_STAGES", "SM90_FMA_EXP2_D64_C3"),
    Sm90Tile(64, "16bit", 2, 128, "SM90_STAGES", "SM90_FMA_EXP2_D64"),
    Sm90Tile(64, "16bit", 3, 128, "SM90_STAGES", "SM90_FMA_EXP2_D64_C3"),
    Sm90Tile(64, "16bit", 4, 64, "SM90_STAGES_N64", "SM90_FMA_EXP2_D64_C4"),
    Sm90Tile(96, "16bit", 2, 128, "SM90_STAGES", "SM90_FMA_EXP2_D128"),
    Sm90Tile(128, "e4m3", 2, 128, "SM90_STAGES", "SM90_FMA_EXP2_D128"),
    Sm90Tile(128, "16bit", 2, 128, "SM90_STAGES", "SM90_FMA_EXP2_D128"),
    Sm90Tile(128, "16bit", 3, 64, "SM90_STAGES_N64", "SM90_FMA_EXP2_D128_C3"),
    Sm90Tile(192, "16bit", 2, 64, "SM90_STAGES_N64", "SM90_FMA_EXP2_D256"),
    Sm90Tile(256, "16bit", 2, 64, "SM90_STAGES_D256", "SM90_FMA_EXP2_D256"),
)


def missing_rows(paths=PATHS, shapes=HEAD_DIM_SHAPES, mma_tiles=MMA_TILES, sm90_tiles=SM90_TILES,
                 knobs=KNOBS):
    """What the tables lack for the paths' head dims, or name wrongly: one line each (the
    generator refuses to write while any is left)."""
    problems = []
    knob_names = {k.name for k in knobs}
    dims = {d for p in paths for d in p.head_dims}
    have = {s.head_dim for s in shapes}
    problems += [f"HEAD_DIM_SHAPES has no row for head dim {d}" for d in sorted(dims - have)]
    for p in paths:
        for d in p.head_dims:
            if p.kernel == "mma" and not any(t.path == p.name and t.head_dim == d
                                             for t in mma_tiles):
                problems.append(f"MMA_TILES has no row for ({p.name!r}, {d})")
            if p.kernel == "sm90" and not any(t.head_dim == d and t.pv == p.pv and
                                              t.consumers == 2 for t in sm90_tiles):
                problems.append(f"SM90_TILES has no row for ({d}, {p.pv!r}, 2 consumers)")
    for row in (*shapes, *mma_tiles, *sm90_tiles):
        for value in row:
            if isinstance(value, str) and value.isupper() and value not in knob_names:
                problems.append(f"{type(row).__name__} {tuple(row)} names no knob {value!r}")
    return problems
