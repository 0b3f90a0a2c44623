#!/usr/bin/env bash
# clang-tidy (.clang-tidy: the checks that find bugs and needless copies; warnings are errors)
# over sagebuild's and the kernel library's host C++, against the compile commands of the CI
# build (cmake --preset ci first). Tests are left out (Catch's macros trip the bugprone checks),
# as are the Windows-only files (this compiler cannot read them: scripts/check-win32.sh).
#   bash scripts/tidy.sh              every such source (~5 min on 2 cores)
#   bash scripts/tidy.sh FILE...      these (pre-commit passes the files a commit changes)
set -euo pipefail
cd "$(dirname "$0")/.."
db=build/ci
[[ -f $db/compile_commands.json ]] || { echo "tidy: no $db/compile_commands.json: cmake --preset ci first" >&2; exit 2; }
if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'tools/sagebuild/src/*.cpp' kernels/src/api.cpp kernels/reference/reference.cpp)
fi
selected=()
for f in "${files[@]}"; do
  case $f in
    *_test.cpp | *test_main.cpp | *_win32.cpp | *sha256_cng.cpp) ;;
    *.cpp) selected+=("$f") ;;
  esac
done
((${#selected[@]})) || exit 0
start=$SECONDS
# The compile commands are clang's (the CI preset), but a build directory configured with GCC
# has GCC's own warning options, unknown to clang; libgit2's option initializer macros leave
# fields to their zero (clang warns: tools/sagebuild/CMakeLists.txt says so for git.cpp alone).
# (clang-tidy counts the warnings of other libraries' headers it did not show on stderr: dropped.)
printf '%s\0' "${selected[@]}" | xargs -0 -P "$(nproc)" -n 4 clang-tidy -p "$db" --quiet \
  --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-missing-field-initializers \
  2> >(grep -v -E '^[0-9]+ warnings? generated\.$' >&2)
echo "tidy: ${#selected[@]} files clean ($((SECONDS - start)) s)"
