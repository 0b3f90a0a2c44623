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
# Disk: torch's CUDA runtime is ~3 GB per CUDA release. Like sagebuild's own build environments
# (toolchain/environment.cpp) the large requirements are shared: every wheel of torch's exact
# dependency closure that is large (nvidia-*, cuda-*, triton) is installed once, on its own, into
# build/torch-runtime/<name>-<version>/ and reached from each environment through a .pth file,
# so torch 2.9 and 2.10 (the same CUDA 12.8 wheels but one) share 3 GB. Nothing goes through
# pip's cache (it would keep a second copy of every wheel). An environment that fails part-way
# (a full disk) leaves no stamp, so the next run starts over; a pool directory is used only once
# it is complete.
set -euo pipefail
cd "$(dirname "$0")/.."

torch_version=${1:-2.11.0}
venv=${2:-build/torch-venv}
py=${3:-3.12}
python=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$py".*/bin/python"$py" 2>/dev/null | tail -1 || true)
python=${python:-$(command -v "python$py" || command -v python3)}
pool=build/torch-runtime
stamp=$venv/.requirements
tools="scikit-build-core==1.1.2 pytest numpy ninja"
wanted="torch==$torch_version (runtime from $pool) $tools"
if [[ -x $venv/bin/python && -f $stamp && "$(cat "$stamp")" == "$wanted" ]]; then
  exit 0
fi

mkdir -p "$(dirname "$venv")" "$pool"
needed_kb=$((4608 * 1024))  # torch and a CUDA runtime that is not in the pool yet
free_kb=$(df -Pk "$pool" | awk 'NR == 2 { print $4 }')
if ((free_kb < needed_kb)); then
  echo "python-env: needs ~4.5 GB free for torch $torch_version and its CUDA runtime;" \
    "$((free_kb / 1024)) MB free on $(df -P "$pool" | awk 'NR == 2 { print $6 }')" >&2
  exit 1
fi

echo "python-env: installing $wanted into $venv ($python)"
rm -rf "$venv"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir
  --no-warn-conflicts)
# torch's whole dependency closure, as pip resolves it for this Python and platform.
closure=$("$venv/bin/python" -m pip install --quiet --dry-run --ignore-installed --disable-pip-version-check \
  --report - "torch==$torch_version" | "$venv/bin/python" -c '
import json, sys
for item in json.load(sys.stdin)["install"]:
    print(item["metadata"]["name"].lower().replace("_", "-") + "==" + item["metadata"]["version"])')
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
small=()
for r in $closure; do
  case $r in
    torch==*) ;;
    nvidia-* | cuda-* | triton==*)
      dir=$pool/${r/==/-}
      if [[ ! -f $dir/.complete ]]; then
        rm -rf "$dir"
        "${pip[@]}" --no-deps --target "$dir" "$r"  # hundreds of MB each: one call apiece
        touch "$dir/.complete"
      fi
      echo "$PWD/$dir" >>"$site/torch-runtime.pth"
      # torch's libraries find the CUDA runtime by their run path, site-packages/nvidia/<lib>/lib
      # (and cusparselt/lib for torch 2.6): linked there, so that a system CUDA runtime of the
      # same soname (Debian's nvidia-cuda-toolkit's libcudart.so.12) is not loaded instead
      # (toolchain/environment.cpp).
      for top in "$dir"/*/; do
        top=${top%/}
        case ${top##*/} in *.dist-info | __pycache__ | bin) continue ;; esac
        if [[ ${top##*/} == nvidia ]]; then
          mkdir -p "$site/nvidia"
          for part in "$top"/*; do
            [[ -e $site/nvidia/${part##*/} ]] || ln -s "$PWD/$part" "$site/nvidia/${part##*/}"
          done
        elif [[ ! -e $site/${top##*/} ]]; then
          ln -s "$PWD/$top" "$site/${top##*/}"
        fi
      done
      ;;
    *) small+=("$r") ;;
  esac
done
"${pip[@]}" --no-deps "torch==$torch_version"
# shellcheck disable=SC2086  # $tools is a list of requirement specifiers
"${pip[@]}" "${small[@]}" $tools
printf '%s' "$wanted" >"$stamp"
