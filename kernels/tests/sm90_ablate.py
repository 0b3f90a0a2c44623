#!/usr/bin/env python3
"""Writes copies of kernels/ with one stage of the Hopper kernel removed, to time what each stage
costs (wrong results, timing only). Each copy is built and timed by sm90_variants.sh:

  python3 kernels/tests/sm90_ablate.py .carry/ablate
  SEQS=4096,16384 bash kernels/tests/sm90_variants.sh "old:" \\
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

KERNEL = Path("src/sm90/attention_sm90.cuh")

ABLATIONS = {
    "nomufu": [("p[jj][e] = device::fast_exp2(arg);", "p[jj][e] = arg;")],
    "nomerge": [("o[i] = fmaf(o[i], rescale_pending[(i >> 1) & 1], o_block[i]);",
                 "o[i] = o_block[i];")],
    "nopv": [
        ("""        sm90::wgmma_e4m3_rs_overwrite(o_block, pa[0], v_desc);
#pragma unroll
        for (int c = 1; c < kBlockN / 32; ++c)
          sm90::wgmma_e4m3_rs(o_block, pa[c], sm90::advance_desc(v_desc, c * 32));""",
         """        (void)v_desc;  // ablation: no P·V; P kept alive through a sink never taken
#pragma unroll
        for (int c = 0; c < 4; ++c)
#pragma unroll
          for (int k = 0; k < 4; ++k) pa_sink ^= pa[c][k];
        if (pa_sink == 0x12345678u && a.kv_len < 0) o_block[0] = 2.f;"""),
        ("    float o_block[Cfg::kVRows / 2];  // P·V of one block, merged into O after it lands\n",
         "    float o_block[Cfg::kVRows / 2];  // P·V of one block, merged into O after it lands\n"
         "    for (int i = 0; i < Cfg::kVRows / 2; ++i) o_block[i] = 1.f;\n"
         "    unsigned pa_sink = 0;\n"),
    ],
    "nosoftmax": [
        ("""  constexpr float kLog2Fp8Max = 8.807354922057604f;  // log2(448)
  constexpr float kMagic""",
         """  rescale[0] = rescale[1] = 1.f;  // ablation: no softmax
#pragma unroll
  for (int c = 0; c < 4; ++c)
#pragma unroll
    for (int k = 0; k < 4; ++k)
      pa[c][k] = 0x30303030u ^ (s[16 * c + k] & 1);
  if (true) return;
  constexpr float kLog2Fp8Max = 8.807354922057604f;  // log2(448)
  constexpr float kMagic"""),
    ],
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    kernels = Path(__file__).resolve().parents[1]
    source = (kernels / KERNEL).read_text()
    for name, edits in ABLATIONS.items():
        text = source
        for old, new in edits:
            if text.count(old) != 1:
                sys.exit(f"{name}: the kernel changed; this edit no longer applies:\n{old}")
            text = text.replace(old, new)
        target = Path(sys.argv[1]) / name / "kernels"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(kernels, target, ignore=shutil.ignore_patterns("__pycache__"))
        (target / KERNEL).write_text(text)
        print(f"{name}: {target}")


if __name__ == "__main__":
    main()
