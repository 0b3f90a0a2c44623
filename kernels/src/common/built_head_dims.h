// Which head dims this build of the library compiled kernels for: all of the manifest's, or the
// ones kernels/CMakeLists.txt's SAGEATTN_HEAD_DIMS asked for (a quicker build of one or two),
// given to api.cpp and quantize.cu as SAGEATTN_BUILT_HEAD_DIMS ("64 128"; "" for all). The other
// head dims' launchers compile without their kernels; validate() refuses a call with one.
#pragma once

namespace sageattn::detail {

// (A compile outside the library's CMake, as lab/sass/ does, builds every head dim.)
#if defined(SAGEATTN_BUILT_HEAD_DIMS)
inline constexpr const char* kBuiltHeadDims = SAGEATTN_BUILT_HEAD_DIMS;
#else
inline constexpr const char* kBuiltHeadDims = "";
#endif

// Whether `list` ("64 128": numbers apart by spaces; "" means every head dim) holds d.
constexpr bool lists_head_dim(const char* list, int d) {
  const char* s = list;
  if (*s == '\0') return true;
  while (*s != '\0') {
    if (*s < '0' || *s > '9') {
      ++s;
      continue;
    }
    int value = 0;
    for (; *s >= '0' && *s <= '9'; ++s)
      value = value * 10 + (*s - '0');
    if (value == d) return true;
  }
  return false;
}

// Whether head dim d's kernels are in this build.
constexpr bool head_dim_built(int d) {
  return lists_head_dim(kBuiltHeadDims, d);
}

}  // namespace sageattn::detail
