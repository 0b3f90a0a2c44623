#!/usr/bin/env bash
# Reads what ptxas made of one kernel instantiation, on this machine (nvcc, no GPU): each kernel's
# registers and spills, ptxas's performance notes (C75xx: wgmma serialized, and why), and the
# SASS opcode counts, for the committed sources and for the same sources with extra flags (a
# knob), side by side. The first look at a kernel change, before any GPU time is spent on it.
#   bash lab/sass/sass_local.sh attention_sm90_e4m3_d128 -DSAGEATTN_SM90_STAGES=2
# Arguments: an instantiation (a file name under kernels/src/instantiations, without .cu), then
# the flags of the variant. Env: ARCH (default 90a), TOP (opcodes shown, default 40).
# cuobjdump and the nvdisasm it runs come from PATH, or else from the tests' tool environment
# (build/pytools, made by scripts/install-python-tools.sh, which this runs if need be).
set -euo pipefail
cd "$(dirname "$0")/../.."
tu=${1:?usage: sass_local.sh INSTANTIATION [FLAGS...] (e.g. attention_sm90_e4m3_d128)}
shift
src=kernels/src/instantiations/$tu.cu
[[ -f $src ]] || { echo "sass_local.sh: no $src; one of: $(cd kernels/src/instantiations && ls -- *.cu | sed 's/\.cu$//' | paste -sd' ')" >&2; exit 2; }
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if ! command -v cuobjdump >/dev/null || ! command -v nvdisasm >/dev/null; then
  bash scripts/install-python-tools.sh >&2
  PATH=$(dirname "$(ls build/pytools/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm | head -1)"):$PATH
fi
cuobjdump=$(command -v cuobjdump)
arch=${ARCH:-90a}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The library's own flags (kernels/CMakeLists.txt) plus ptxas's verbose report.
compile() {  # name, extra flags...
  local name=$1
  shift
  "$nvcc" -Ikernels/include -O3 -DNDEBUG -lineinfo --expt-relaxed-constexpr -std=c++17 \
    -Xptxas=--warn-on-spills,-v -gencode "arch=compute_$arch,code=sm_$arch" "$@" \
    -x cu -c "$src" -o "$work/$name.o" >"$work/$name.ptxas" 2>&1 ||
    { cat "$work/$name.ptxas" >&2; exit 1; }
  "$cuobjdump" -sass "$work/$name.o" >"$work/$name.sass"
}
compile base &
base_pid=$!
compile variant "$@" &
variant_pid=$!
wait "$base_pid"
wait "$variant_pid"

python3 - "$work" "${TOP:-40}" "$*" <<'EOF'
import collections, re, sys
work, top, flags = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def report(name):
    kernels, notes = {}, []
    current = None
    for line in open(f"{work}/{name}.ptxas"):
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            current = m.group(1)
        elif m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line):
            kernels[current] = f"spills {m.group(1)}/{m.group(2)} B"
        elif m := re.search(r"Used (\d+) registers", line):
            kernels[current] += f", {m.group(1)} registers at launch"
        elif "(C75" in line:
            notes.append(line.split("ptxas info    : ", 1)[-1].strip())
    ops = collections.Counter()
    for line in open(f"{work}/{name}.sass"):
        if m := re.match(r"\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)", line):
            ops[m.group(1)] += 1
    return kernels, notes, ops

base, variant = report("base"), report("variant")
for label, (kernels, notes, _) in (("committed", base), (f"with {flags or 'no flags'}", variant)):
    print(f"== {label}")
    for kernel, what in kernels.items():
        print(f"  {kernel}: {what}")
    for note in notes:
        print(f"  {note}")
print(f"== SASS opcodes (the {top} most frequent; committed / with the flags / difference)")
total_b, total_v = sum(base[2].values()), sum(variant[2].values())
for op, _ in (base[2] + variant[2]).most_common(top):
    b, v = base[2][op], variant[2][op]
    print(f"  {op:44} {b:7} {v:7} {v - b:+7}")
print(f"  {'all instructions':44} {total_b:7} {total_v:7} {total_v - total_b:+7}")
EOF
