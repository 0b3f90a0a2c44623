# Sourced by the scripts that install Debian packages: one way to install what is missing.
#   apt_install_missing WHO PACKAGE...
# installs the packages that dpkg does not list as installed (apt is not touched at all when
# none is missing), as root or through sudo; WHO prefixes what it says. Returns 0 when nothing
# was missing, and says how many were present only when WHO wants it (APT_SAY_PRESENT=1).
apt_install_missing() {
  local who=$1
  shift
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    [[ -z ${APT_SAY_PRESENT:-} ]] || echo "$who: all $# packages present"
    return 0
  fi
  echo "$who: installing ${missing[*]}" >&2
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}
