"""The kernel library's facts, decided here once: which attention kernels exist (P·V path, head
dims, types), and the numbers the C++ API, the C API, the torch bindings and the Python package
must agree on. kernels/generate_instantiations.py writes every copy from it:

  include/sageattn/manifest.h         the public enums and constants, path_name and
                                      path_supports_head_dim (sageattn.h includes it)
  src/dispatch.h                      the launch of each (path, type, head dim) instantiation
  src/instantiations/*.cu             one translation unit per instantiation
  python/sageattention/_manifest.py   the Python package's numbers (core.py imports them)

Edit here, run `python3 kernels/generate_instantiations.py`, commit what it writes; the test
`kernels.generated` (`generate_instantiations.py --check`) fails when the two differ. The rules
that pick among these (which path a GPU and a length get, what each GPU lacks) are functions
in sageattn.h, over these facts.
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
         (("fp32", "fp32+fp32"), ("fp16_block", "fp32+fp16"))),
    Path("fp8_sm90", "sm90", "e4m3", (64, 128),
         "the Hopper kernel: the fp8 path's algorithm on wgmma with TMA and warp specialisation "
         "(compute capability 9.0, a library built for sm_90a).",
         (("fp32", "fp32+fp32"),)),
    Path("fp16_sm90", "sm90", "16bit", (64, 96, 128, 192, 256),
         "the Hopper kernel with the fp16 path's P·V: P and V in the input's 16-bit type (V read "
         "as the caller laid it out), accumulated in FP32 (same requirements)."),
)

# Rows that share one INT8 scale, in Granularity order: per_block = 64 rows (one CTA tile),
# per_warp = 16 rows.
GRANULARITIES = ("per_block", "per_warp")

# The tensor layouts the torch operators take, in the bindings' numbers: HND = [batch, heads,
# seq, head_dim], NHD = [batch, seq, heads, head_dim] (the library itself takes strides).
LAYOUTS = ("HND", "NHD")

# Why a path cannot run on a GPU, in CapabilityGap order (sageattn.h: capability_gap).
CAPABILITY_GAPS = ("none", "below_sm80", "fp8_needs_sm89", "hopper_only", "no_sm90a_code")

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
