#include <catch2/catch.hpp>

#include "wheel/verifier.h"

namespace sagebuild::wheel {
namespace {

TEST_CASE("library search paths: $ORIGIN-relative and inside site-packages only", "[binaries]") {
  const std::string so = "sageattention/_kernels.so";
  for (const char* ok : {"$ORIGIN", "${ORIGIN}", "$ORIGIN/", "$ORIGIN/../sageattention.libs",
                         "$ORIGIN/../torch/lib", "$ORIGIN/./lib"}) {
    INFO(ok);
    CHECK_FALSE(unsafe_search_path(so, ok));
  }
  for (const char* bad : {"/tmp", "/usr/local/cuda/lib64", "", "lib", "$ORIGIN/../..",
                          "$ORIGIN/../../../lib", "$ORIGINAL", "$ORIGIN/$LIB"}) {
    INFO(bad);
    CHECK(unsafe_search_path(so, bad));
  }
  // .data/platlib installs into site-packages itself: its prefix does not count as depth.
  CHECK(unsafe_search_path("sageattention-2.2.0.data/platlib/sageattention/x.so", "$ORIGIN/../.."));
  CHECK_FALSE(
      unsafe_search_path("sageattention-2.2.0.data/platlib/sageattention/x.so", "$ORIGIN/.."));
}

}  // namespace
}  // namespace sagebuild::wheel
