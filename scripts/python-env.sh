#!/usr/bin/env bash
# A Python environment with one torch from PyPI, for building wheels against and testing them:
#   scripts/python-env.sh                          torch 2.11.0 in build/torch-venv (the
#                                                  native-cu130 profile's torch, a CUDA 13.0 build)
#   scripts/python-env.sh VERSION VENV [PYTHON]    torch VERSION in VENV, e.g. 2.10.0 (the stable
#                                                  ABI's target) or the newest torch on PyPI
# Python 3.12 (pyenv's, else the system's) unless PYTHON (X.Y) is given; scikit-build-core and
# pytest beside torch. Idempotent: made once, remade only when this list changes. Prints nothing
# else on success.
#
# Disk: torch's CUDA runtime makes this ~4 GB. It is installed the way sagebuild's own build
# environments are (toolchain/environment.cpp): torch without its dependencies, then its
# requirements without triton (neither building nor importing the package needs torch's
# compiler: 0.6 GB), without pip's cache (it would keep a second copy of every wheel: ~3 GB), one
# pip call per large requirement so that at most one batch of downloaded wheels waits on disk.
# A run that fails part-way (a full disk) leaves no stamp, so the next run starts over.
set -euo pipefail
cd "$(dirname "$0")/.."

torch_version=${1:-2.11.0}
venv=${2:-build/torch-venv}
py=${3:-3.12}
python=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$py".*/bin/python"$py" 2>/dev/null | tail -1 || true)
python=${python:-$(command -v "python$py" || command -v python3)}
stamp=$venv/.requirements
tools="scikit-build-core==1.1.2 pytest numpy ninja"
wanted="torch==$torch_version (without triton) $tools"
if [[ -x $venv/bin/python && -f $stamp && "$(cat "$stamp")" == "$wanted" ]]; then
  exit 0
fi

mkdir -p "$(dirname "$venv")"
needed_kb=$((4608 * 1024))  # measured: 4.1 GB at the peak
free_kb=$(df -Pk "$(dirname "$venv")" | awk 'NR == 2 { print $4 }')
if ((free_kb < needed_kb)); then
  echo "python-env: needs ~4.5 GB free for torch $torch_version and its CUDA runtime in $venv;" \
    "$((free_kb / 1024)) MB free on $(df -P "$(dirname "$venv")" | awk 'NR == 2 { print $6 }')" >&2
  exit 1
fi

echo "python-env: installing $wanted into $venv ($python)"
rm -rf "$venv"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir
  --no-warn-conflicts)  # torch lacks its requirements until the last call
"${pip[@]}" --no-deps "torch==$torch_version"
# torch's requirements as its metadata states them, for this platform, less triton.
mapfile -t requirements < <("$venv/bin/python" - <<'EOF'
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
for text in requires('torch') or []:
    r = Requirement(text)
    if r.marker is not None and not r.marker.evaluate({'extra': ''}):
        continue
    if r.name.lower() == 'triton':
        continue
    r.marker = None
    print(r)
EOF
)
small=()
for r in "${requirements[@]}"; do
  case $r in
    nvidia-* | cuda-toolkit*) "${pip[@]}" "$r" ;;  # hundreds of MB each: one call apiece
    *) small+=("$r") ;;
  esac
done
# shellcheck disable=SC2086  # $tools is a list of requirement specifiers
"${pip[@]}" "${small[@]}" $tools
printf '%s' "$wanted" >"$stamp"
