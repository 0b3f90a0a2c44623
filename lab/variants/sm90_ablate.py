#!/usr/bin/env python3
"""Writes copies of kernels/ with one stage of the Hopper kernel removed, to time what each stage
costs (wrong results, timing only). Each copy is built and timed by sm90_variants.sh:

  python3 lab/variants/sm90_ablate.py .carry/ablate
  SEQS=4096,16384 bash lab/variants/sm90_variants.sh "old:" \\
      "nomufu@.carry/ablate/nomufu/kernels:" "nosoftmax@.carry/ablate/nosoftmax/kernels:" ...

Ablations (each keeps its inputs alive, so that ptxas does not drop more than the stage; check
the variant's resources line for spills, which would time something else):
  nomufu     ex2 replaced by its argument (the softmax without the MUFU)
  nomerge    O = O' instead of O = O·rescale + O' (the two-level merge)
  nopv       no P·V wgmma (P still computed and kept alive)
  nosoftmax  P from one bit of S: no max, no exponentials, no conversions
"""
import shutil
import sys
from pathlib import Path

SOURCES = "src/sm90/*.cuh"  # each edit must match exactly once across the Hopper kernel's files

ABLATIONS = {
    "nomufu": [("p[jj][e] = exp2_on_fma(j, kFmaExp2Groups) ? exp2_fma(arg) : device::fast_exp2(arg);",
                "p[jj][e] = arg;")],
    "nomerge": [("o[i] = fmaf(o[i], rescale_pending[(i >> 1) & 1], o_block[i]);",
                 "o[i] = o_block[i];")],
    "nopv": [
        ("""        sm90::wgmma_e4m3_rs_overwrite(o_block, pa[0], v_desc);
#pragma unroll
        for (int c = 1; c < Cfg::kPvSteps; ++c)
          sm90::wgmma_e4m3_rs(o_block, pa[c], sm90::advance_desc(v_desc, c * 32));""",
         """        (void)v_desc;  // ablation: no P·V; P kept alive through a sink never taken
#pragma unroll
        for (int c = 0; c < Cfg::kPvSteps; ++c)
#pragma unroll
          for (int k = 0; k < 4; ++k) pa_sink ^= pa[c][k];
        if (pa_sink == 0x12345678u && a.kv_len < 0) o_block[0] = 2.f;"""),
        ("  [[maybe_unused]] float o_block[Cfg::kPv8 ? Cfg::kOFloats : 1];  // e4m3: one block's P·V\n",
         "  [[maybe_unused]] float o_block[Cfg::kPv8 ? Cfg::kOFloats : 1];  // e4m3: one block's P·V\n"
         "  for (int i = 0; i < (Cfg::kPv8 ? Cfg::kOFloats : 1); ++i) o_block[i] = 1.f;\n"
         "  unsigned pa_sink = 0;\n"),
    ],
    # The e4m3 path's exponentials and conversions (the row max stays: it is a separate phase).
    "nosoftmax": [
        ("""  float bias[2][8];  // per row and scale group: -(kSmallIntBias·scale) - m + log2 448
""",
         """  (void)scale, (void)m_use, (void)visible;  // ablation: P from one bit of S
#pragma unroll
  for (int c = 0; c < 4; ++c)
#pragma unroll
    for (int k = 0; k < 4; ++k)
      pa[c][k] = 0x30303030u ^ (s[16 * c + k] & 1);
  if (true) return;
  float bias[2][8];  // per row and scale group: -(kSmallIntBias·scale) - m + log2 448
"""),
    ],
}


def apply(sources, name, edits):
    """The edited texts of `sources` ({path: text}); exits naming the edit that no longer applies."""
    texts = dict(sources)
    for old, new in edits:
        hits = [path for path, text in texts.items() if old in text]
        count = sum(texts[path].count(old) for path in hits)
        if count != 1:
            sys.exit(f"{name}: the kernel changed; this edit matches {count} times in {SOURCES} "
                     f"(it must match once):\n{old}")
        texts[hits[0]] = texts[hits[0]].replace(old, new)
    return {path: text for path, text in texts.items() if text != sources[path]}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    kernels = Path(__file__).resolve().parents[2] / "kernels"
    sources = {path.relative_to(kernels): path.read_text() for path in kernels.glob(SOURCES)}
    for name, edits in ABLATIONS.items():
        edited = apply(sources, name, edits)
        target = Path(sys.argv[1]) / name / "kernels"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(kernels, target, ignore=shutil.ignore_patterns("__pycache__"))
        for path, text in edited.items():
            (target / path).write_text(text)
        print(f"{name}: {target} ({', '.join(str(p) for p in sorted(edited))})")


if __name__ == "__main__":
    main()
