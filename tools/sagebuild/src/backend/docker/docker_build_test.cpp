#include "backend/docker/docker_build.h"

#include <catch2/catch.hpp>

#include "util/fs.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;

TEST_CASE("a sagebuild handed to Docker builds must lie in the build context", "[docker]") {
  fs::TempDir dir("sagebuild-context");
  const stdfs::path root = dir.path() / "repo";
  stdfs::create_directories(root / "tools");
  stdfs::create_directories(root / "build" / "release");
  REQUIRE(fs::write_file_atomic(root / ".dockerignore", "# outputs\nbuild/\ndist/\n"));
  for (const auto& file : {root / "sagebuild", root / "tools" / "sagebuild",
                           root / "build" / "release" / "sagebuild", dir.path() / "sagebuild"}) {
    REQUIRE(fs::write_file_atomic(file, "binary"));
  }
  CHECK(path_in_context(root, root / "sagebuild").value() == "sagebuild");
  CHECK(path_in_context(root, root / "tools" / ".." / "tools" / "sagebuild").value() ==
        "tools/sagebuild");
  const auto ignored = path_in_context(root, root / "build" / "release" / "sagebuild");
  REQUIRE_FALSE(ignored);
  CHECK_THAT(ignored.error().message, Catch::Contains(".dockerignore leaves build/ out"));
  const auto outside = path_in_context(root, dir.path() / "sagebuild");
  REQUIRE_FALSE(outside);
  CHECK_THAT(outside.error().message, Catch::Contains("not in the build context"));
  CHECK_FALSE(path_in_context(root, root));
}

}  // namespace
}  // namespace sagebuild::backend
