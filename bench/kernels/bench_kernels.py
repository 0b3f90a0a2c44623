#!/usr/bin/env python3
"""Speed of the kernel library against torch SDPA (flash and cuDNN backends), timed in the same
run on the same inputs. TOPS = 4·b·h·s²·d / time (halved for causal); b·s = 32k tokens, 32 heads
at d=128, 64 at d=64 and 16 at d=256, fp16, HND. Times are medians of CUDA-event-timed repetitions
after warm-up. Prints a table, writes JSON (--json).

  attn      the attention kernel alone (inputs quantized beforehand)
  e2e       quantization + attention, what sageattn() costs

Usage: bench_kernels.py [--json OUT] [--paths fp16,fp8,fp8_sm90] [--seqs 1024,...] [--dims 128,64]
"""
import argparse
import json
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sageattn_ctypes as sc  # noqa: E402
from cuda_timing import median_ms as time_ms  # noqa: E402,F401  (bench_*.py import it from here)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--paths", help="comma-separated P·V paths (default: all this GPU runs)")
    parser.add_argument("--seqs", default="1024,2048,4096,8192,16384,32768")
    parser.add_argument("--dims", default="128,64", help="head dims to time (128: 32 heads, 64: 64, 256: 16)")
    args = parser.parse_args()
    heads_of = {128: 32, 64: 64, 256: 16}  # b·s = 32k tokens, h·d = 4096
    dims = [int(d) for d in args.dims.split(",")]
    if any(d not in heads_of for d in dims):
        parser.error(f"--dims: head dims {sorted(heads_of)} only, not {args.dims}")
    lib = sc.load()
    paths = args.paths.split(",") if args.paths else sc.available_paths(lib)
    rows = []
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'d':>3} {'causal':>6} {'seq':>6} {'batch':>5} | " +
          " ".join(f"{n:>13}" for n in ["flash", "cudnn"] +
                   [f"{p}-{w}" for p in paths for w in ("attn", "e2e")]) +
          " | attn/cudnn")
    for d, heads in ((d, heads_of[d]) for d in dims):
        for causal in (False, True):
            for seq in map(int, args.seqs.split(",")):
                b = max(1, 32768 // seq)
                q, k, v = (torch.randn(b, heads, seq, d, device="cuda", dtype=torch.float16)
                           for _ in range(3))
                flops = 4 * b * heads * seq * seq * d / (2 if causal else 1)
                row = {"d": d, "causal": causal, "seq": seq, "batch": b, "heads": heads}
                for name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                                      ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel(backend):
                            ms = time_ms(lambda: torch.nn.functional.scaled_dot_product_attention(
                                q, k, v, is_causal=causal))
                        row[name] = flops / ms / 1e9
                    except RuntimeError:
                        row[name] = None
                o = torch.empty_like(q)
                for path in paths:
                    call = sc.Call(lib, q, k, v, o, "HND", causal=causal, path=path)
                    call.run(1)
                    row[f"{path}-attn"] = flops / time_ms(lambda: call.run(2)) / 1e9
                    row[f"{path}-e2e"] = flops / time_ms(lambda: call.run(0)) / 1e9
                rows.append(row)
                best = max(row.get(f"{p}-attn") or 0 for p in paths)
                ratio = best / row["cudnn"] if row.get("cudnn") else float("nan")
                cells = [row.get(n) for n in ["flash", "cudnn"] +
                         [f"{p}-{w}" for p in paths for w in ("attn", "e2e")]]
                print(f"{d:>3} {str(causal):>6} {seq:>6} {b:>5} | " +
                      " ".join(f"{c:>13.0f}" if c else f"{'-':>13}" for c in cells) +
                      f" | {ratio:.2f}")
                del q, k, v, o, call
                torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
