#!/usr/bin/env bash
# Whether a change of shape left the kernels' machine code as it was: compiles the given
# translation units (default: every sm_90a instantiation and quantize.cu) at a git revision
# (default HEAD) and in the working tree, with the library's flags, and compares each kernel's
# SASS instruction by instruction (addresses and the listing's own offsets ignored), its
# registers and its spills. "same": identical; "equivalent": identical once each comparison of
# two registers is written one way round and operand-reuse hints are dropped (sass_canonical.py:
# the same computation, so the same outputs bit for bit). Exit 0 when every unit is one of the
# two; else the first differences.
#   bash lab/sass/sass_same.sh                 # working tree against HEAD
#   bash lab/sass/sass_same.sh HEAD~3 quantize # against an older revision, one file
#   bash lab/sass/sass_same.sh DIR             # against a copy of the tree (DIR/kernels)
# Env: ARCH (default 90a), JOBS (parallel compiles, default nproc), SHOW_DIFF=1 (the first lines
# of each listing's diff), PTX=1 (compare the PTX, byte for byte, instead: no ptxas run, a few
# times faster; the same PTX gives the same SASS from the same ptxas, a different one may too).
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
if [[ -d $rev/kernels ]]; then  # a copy of the tree (a machine without the repository's history)
  trap 'rm -rf "$work"' EXIT
  ln -s "$(realpath "$rev")" "$work/base"
else
  trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  git worktree add --detach "$work/base" "$rev" >/dev/null 2>&1
fi

source_of() {  # tree, unit
  if [[ $2 != quantize ]]; then echo "$1/kernels/src/instantiations/$2.cu"
  elif [[ -e $1/kernels/src/quantize/quantize.cu ]]; then echo "$1/kernels/src/quantize/quantize.cu"
  else echo "$1/kernels/src/quantize.cu"; fi  # where it lived before kernels/src was by role
}
compile() {  # tree, unit, out-prefix
  local src
  src=$(source_of "$1" "$2")
  if [[ -n ${PTX:-} ]]; then
    "$nvcc" -I"$1/kernels/include" -O3 -DNDEBUG --expt-relaxed-constexpr -std=c++17 \
      -gencode "arch=compute_$arch,code=sm_$arch" --ptx -x cu "$src" -o "$3.ptx" >"$3.log" 2>&1 ||
      { echo "sass_same.sh: $src does not compile:" >&2; cat "$3.log" >&2; return 1; }
    return 0
  fi
  "$nvcc" -I"$1/kernels/include" -O3 -DNDEBUG -lineinfo --expt-relaxed-constexpr -std=c++17 \
    -Xptxas=-v -gencode "arch=compute_$arch,code=sm_$arch" -x cu -c "$src" -o "$3.o" >"$3.ptxas" 2>&1 ||
    { echo "sass_same.sh: $src does not compile:" >&2; cat "$3.ptxas" >&2; return 1; }
  python3 lab/sass/sass_canonical.py listing "$3.o" >"$3.sass"
  grep -E "registers|spill" "$3.ptxas" | sed -E 's/.*ptxas info\s*: //' >"$3.resources" || true
}
pids=()
for u in "${units[@]}"; do
  compile "$work/base" "$u" "$work/base-$u" & pids+=($!)
  compile "$PWD" "$u" "$work/tree-$u" & pids+=($!)
  while (($(jobs -rp | wc -l) >= ${JOBS:-$(nproc)})); do sleep 0.2; done
done
for p in "${pids[@]}"; do wait "$p"; done

status=0
if [[ -n ${PTX:-} ]]; then
  for u in "${units[@]}"; do
    # An anonymous namespace's mangled name hashes the source file's path: not compared.
    for side in base tree; do
      sed -E 's/_GLOBAL__N__[0-9a-f]+_/_GLOBAL__N__/g' "$work/$side-$u.ptx" >"$work/$side-$u.ptx.cmp"
    done
    if cmp -s "$work/base-$u.ptx.cmp" "$work/tree-$u.ptx.cmp"; then
      printf 'same PTX   %s (%s lines)\n' "$u" "$(wc -l <"$work/base-$u.ptx")"
    else
      status=1
      echo "DIFFERENT  $u (PTX)"
      [[ -n ${SHOW_DIFF:-} ]] && { diff "$work/base-$u.ptx.cmp" "$work/tree-$u.ptx.cmp" | head -40 | sed 's/^/    /' || true; }
    fi
  done
  exit $status
fi
for u in "${units[@]}"; do
  lines=$(wc -l <"$work/base-$u.sass")
  kernels=$(grep -c 'Used' "$work/base-$u.resources" || true)
  verdict=$(python3 lab/sass/sass_canonical.py compare "$work/base-$u.sass" "$work/tree-$u.sass") || true
  if ! cmp -s "$work/base-$u.resources" "$work/tree-$u.resources"; then
    status=1
    echo "DIFFERENT  $u"
    diff "$work/base-$u.resources" "$work/tree-$u.resources" | sed 's/^/    /' || true
    echo "    $verdict"
  elif [[ $verdict == different* ]]; then
    status=1
    echo "DIFFERENT  $u"
    echo "    ${verdict#different: }"
  else
    printf '%-10s %s (%s SASS lines, %s kernels)\n' "$verdict" "$u" "$lines" "$kernels"
  fi
  [[ -n ${SHOW_DIFF:-} && $verdict != same ]] && { diff "$work/base-$u.sass" "$work/tree-$u.sass" | head -40 | sed 's/^/    /' || true; }
done
exit $status
