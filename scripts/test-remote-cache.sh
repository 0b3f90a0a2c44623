#!/usr/bin/env bash
# A compile cache shared across machines through ccache's remote storage, against a real Redis
# server on 127.0.0.1 (docs/build.md, "A compile cache shared across machines"). Each "machine" is
# a fresh pair of cache folders (ccache's and sagebuild's) on this host, building this
# environment's wheel from this checkout (`sagebuild build --env current`, one architecture):
#   A  cold, with the remote: compiles everything and fills the remote;
#   B  cold, with the same remote: compiles nothing (every compile a remote hit, by ccache's own
#      statistics) and gives the same wheel, byte for byte;
#   C  cold, its remote down (a closed port): compiles locally, warns, same wheel;
#   D  cold, the remote's entries corrupted: ccache refuses them, compiles, same wheel.
# Times go to build/remote-cache-test/timings.txt; exit status: the first failure's.
# Needs sagebuild (scripts/test.sh builds it) and build/torch-venv (scripts/python-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/apt.sh
apt_install_missing test-remote-cache redis-server ccache
bash scripts/python-env.sh >/dev/null

sb=${SAGEBUILD:-build/ci/tools/sagebuild/sagebuild}
[[ -x $sb ]] || { echo "test-remote-cache: no sagebuild at $sb (scripts/test.sh builds it)" >&2; exit 2; }
out=$PWD/build/remote-cache-test
rm -rf "$out"
mkdir -p "$out"
timings=$out/timings.txt
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
  --pidfile "$out/redis.pid" --logfile "$out/redis.log" --dir "$out"
trap 'kill "$(cat "$out/redis.pid")" 2>/dev/null || true' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
entry_result() {  # the last --env current build's results record
  ls -t build/results/*.json | head -1
}
failures=0
check() {  # name, condition (a shell expression), detail
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1: $3"; failures=$((failures + 1)); fi
}
# Each machine's figures, for the checks: compiles, local_hits, remote_hits, compiled, errors.
# Every machine builds with its caches at one path, as machines that share a cache do (their
# ~/.cache): the binding's include paths name the kernel cache, and ccache's keys hold them.
# After its build a machine's folder is moved aside under its name.
machine() {  # name, remote storage ("" for none): a cold build with fresh caches
  local name=$1 storage=$2 here=$out/machine dir=$out/$1 start=$SECONDS
  rm -rf "$here"
  mkdir -p "$here"
  CCACHE_DIR=$here/ccache SAGEBUILD_CACHE_DIR=$here/sagebuild-cache CCACHE_REMOTE_STORAGE=$storage \
    "$sb" build --env current --python build/torch-venv/bin/python --arch-list 8.0 \
    --dist "$here/dist" --force >"$here/build.log" 2>&1 || { cat "$here/build.log"; exit 1; }
  echo "$name $((SECONDS - start)) s" | tee -a "$timings"
  cp build/sagebuild/*/ccache-stats.log "$here/ccache-stats.log" 2>/dev/null || true
  mv "$here" "$dir"
  python3 - "$(entry_result)" >"$dir/stats" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1])).get("compile_cache", {})
print(" ".join(str(c.get(k, 0)) for k in ("compiles", "local_hits", "remote_hits", "compiled", "remote_errors")))
EOF
  read -r compiles local_hits remote_hits compiled errors <"$dir/stats"
  echo "  $name: $compiles compiles: $local_hits local hits, $remote_hits remote hits, $compiled compiled, $errors remote errors"
}

machine A "redis://127.0.0.1:$port"
check "A compiled everything and stored it" '((compiled > 20 && remote_hits == 0))' "$(cat "$out/A/stats")"
a_compiled=$compiled
machine B "redis://127.0.0.1:$port"
check "B compiled nothing: every compile a remote hit" '((compiled == 0 && remote_hits == a_compiled))' \
  "$(cat "$out/B/stats"); compiled: $(awk '/^#/{f=$2} /^cache_miss$/{print f}' "$out/B/ccache-stats.log" | tr '\n' ' ')"
check "B's wheel is A's, byte for byte" 'cmp -s "$out"/A/dist/*.whl "$out"/B/dist/*.whl' "differ"
machine C "redis://127.0.0.1:$closed"
check "C (remote down) compiled locally" '((compiled == a_compiled && errors > 0))' "$(cat "$out/C/stats")"
check "C warned about the remote" 'grep -q "warning: the remote compile cache (redis://127.0.0.1:$closed) failed" "$out/C/build.log"' \
  "no warning in $out/C/build.log"
check "C's wheel is A's" 'cmp -s "$out"/A/dist/*.whl "$out"/C/dist/*.whl' "differ"
# Every stored value overwritten with garbage of the same length (through stdin: objects are
# megabytes).
redis-cli -p "$port" --scan | while read -r key; do
  len=$(redis-cli -p "$port" strlen "$key")
  head -c "$len" /dev/zero | tr '\0' x | redis-cli -p "$port" -x set "$key" >/dev/null
done
machine D "redis://127.0.0.1:$port"
check "D refused the corrupt entries and compiled" '((compiled == a_compiled && remote_hits == 0))' \
  "$(cat "$out/D/stats")"
check "D's wheel is A's" 'cmp -s "$out"/A/dist/*.whl "$out"/D/dist/*.whl' "differ"
cat "$timings"
echo "test-remote-cache: $failures failed"
((failures == 0))
