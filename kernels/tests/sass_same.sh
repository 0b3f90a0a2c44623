#!/usr/bin/env bash
# Whether a change of shape left the kernels' machine code as it was: compiles the given
# translation units (default: every sm_90a instantiation and quantize.cu) at a git revision
# (default HEAD) and in the working tree, with the library's flags, and compares each kernel's
# SASS instruction by instruction (addresses and the listing's own offsets ignored), its
# registers and its spills. Exit 0 when everything is identical; else the first differences.
#   bash kernels/tests/sass_same.sh                 # working tree against HEAD
#   bash kernels/tests/sass_same.sh HEAD~3 quantize # against an older revision, one file
# Env: ARCH (default 90a), JOBS (parallel compiles, default nproc), SHOW_DIFF=1 (the first lines
# of each listing's diff).
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:-HEAD}
shift || true
units=("$@")
if ((${#units[@]} == 0)); then
  units=(quantize)
  for f in kernels/src/instantiations/attention_sm90_*.cu; do units+=("$(basename "$f" .cu)"); done
fi
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if ! command -v cuobjdump >/dev/null; then
  bash scripts/install-python-tools.sh >&2
  PATH=$(dirname "$(ls build/pytools/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm | head -1)"):$PATH
fi
arch=${ARCH:-90a}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$rev" >/dev/null 2>&1

source_of() {  # tree, unit
  if [[ $2 == quantize ]]; then echo "$1/kernels/src/quantize.cu"; else echo "$1/kernels/src/instantiations/$2.cu"; fi
}
compile() {  # tree, unit, out-prefix
  local src
  src=$(source_of "$1" "$2")
  "$nvcc" -I"$1/kernels/include" -O3 -DNDEBUG -lineinfo --expt-relaxed-constexpr -std=c++17 \
    -Xptxas=-v -gencode "arch=compute_$arch,code=sm_$arch" -x cu -c "$src" -o "$3.o" >"$3.ptxas" 2>&1 ||
    { echo "sass_same.sh: $src does not compile:" >&2; cat "$3.ptxas" >&2; return 1; }
  cuobjdump -sass "$3.o" | sed -E 's@/\*[0-9a-f]{4,}\*/@@g; s@ +/\* 0x[0-9a-f]+ \*/@@g; s@_GLOBAL__N__[0-9a-f]+_[0-9]+_([A-Za-z0-9_]+)_cu_[0-9a-f]{8}@_GLOBAL__N__\1@g' |
    grep -vE '^\s*$|^\s*/\* 0x|^\s*identifier = ' >"$3.sass"  # identifier: the source's path
  grep -E "registers|spill" "$3.ptxas" | sed -E 's/.*ptxas info\s*: //' >"$3.resources" || true
}
pids=()
for u in "${units[@]}"; do
  compile "$work/base" "$u" "$work/base-$u" & pids+=($!)
  compile "$PWD" "$u" "$work/tree-$u" & pids+=($!)
  while (($(jobs -rp | wc -l) >= ${JOBS:-$(nproc)})); do sleep 0.2; done
done
for p in "${pids[@]}"; do wait "$p"; done

# How two listings differ: the same instructions in another order or with other registers
# (the allocator's choice), or other instructions (their counts per opcode).
compare() {  # base.sass tree.sass
  python3 - "$1" "$2" <<'PY'
import collections, re, sys
def ops(path):
    c = collections.Counter()
    for line in open(path):
        m = re.match(r"\s+(?:@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)", line)
        if m and not line.strip().startswith(("Function", ".")): c[m.group(1)] += 1
    return c
a, b = ops(sys.argv[1]), ops(sys.argv[2])
if a == b:
    print(f"    same {sum(a.values())} instructions, opcode for opcode; other registers or order")
else:
    print(f"    instructions {sum(a.values())} -> {sum(b.values())}:",
          ", ".join(f"{op} {a[op]}->{b[op]}" for op in sorted(set(a) | set(b)) if a[op] != b[op])[:600])
PY
}

status=0
for u in "${units[@]}"; do
  lines=$(wc -l <"$work/base-$u.sass")
  if cmp -s "$work/base-$u.sass" "$work/tree-$u.sass" && cmp -s "$work/base-$u.resources" "$work/tree-$u.resources"; then
    echo "same       $u ($lines SASS lines, $(grep -c 'Used' "$work/base-$u.resources") kernels)"
  else
    status=1
    echo "DIFFERENT  $u"
    diff "$work/base-$u.resources" "$work/tree-$u.resources" | sed 's/^/    /' || true
    compare "$work/base-$u.sass" "$work/tree-$u.sass"
    [[ -n ${SHOW_DIFF:-} ]] && { diff "$work/base-$u.sass" "$work/tree-$u.sass" | head -40 | sed 's/^/    /' || true; }
  fi
done
exit $status
