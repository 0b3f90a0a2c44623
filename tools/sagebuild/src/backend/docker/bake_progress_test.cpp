#include "backend/docker/bake_progress.h"

#include <catch2/catch.hpp>

namespace sagebuild::backend {
namespace {

TEST_CASE("bake progress: each target's step, and the phases of the build inside its image",
          "[bake]") {
  BakeProgressReader reader({"linux-a", "linux-b"});
  auto step = reader.feed("#12 [linux-a toolkit 1/1] RUN case \"debian\" in image|pypi) ;;");
  REQUIRE(step);
  CHECK(step->target == "linux-a");
  CHECK(step->step == "toolkit 1/1: RUN case \"debian\" in image|pypi) ;;");
  // Output of that step: only the inner sagebuild's lines for its entry are steps.
  CHECK_FALSE(reader.feed("#12 3.021 Get:1 http://deb.debian.org/debian trixie InRelease"));
  step = reader.feed("#12 41.07 [linux-a] kernels (12 s)");
  REQUIRE(step);
  CHECK(step->target == "linux-a");
  CHECK(step->step == "in the image: kernels (12 s)");
  CHECK_FALSE(reader.feed("#12 41.07 [linux-b] kernels (12 s)"));  // not vertex 12's target
  CHECK_FALSE(reader.feed("#12 DONE 602.1s"));
  CHECK_FALSE(reader.feed("#13 CACHED"));
  // BuildKit's own vertices and unknown targets are not steps.
  CHECK_FALSE(reader.feed("#1 [internal] load build definition from Dockerfile.linux"));
  CHECK_FALSE(reader.feed("#2 [other-target build 1/1] RUN x"));
  CHECK_FALSE(reader.feed("#3 41.07 [linux-a] from a vertex never started"));
  // A RUN's continued lines read as one.
  step = reader.feed("#15 [linux-b tools 2/4] RUN apt-get update     && apt-get install");
  REQUIRE(step);
  CHECK(step->step == "tools 2/4: RUN apt-get update && apt-get install");
  // A long command is cut to one console line.
  step = reader.feed("#14 [linux-b build 3/3] RUN " + std::string(200, 'x'));
  REQUIRE(step);
  CHECK(step->step.size() < 100);
  CHECK(step->step.ends_with("..."));
}

TEST_CASE("bake progress: lines that are not BuildKit's are ignored, whatever they hold",
          "[bake]") {
  BakeProgressReader reader({"t"});
  for (const std::string_view line :
       {"", "#", "#x [t a 1/1] RUN", "#99999999999999999999 [t a 1/1] RUN", "#5", "#5 [t",
        "#5 [t] RUN", "#5 [t a 1/1]RUN", "plain text", "#5 12.0"}) {
    INFO(line);
    CHECK_FALSE(reader.feed(line));
  }
}

}  // namespace
}  // namespace sagebuild::backend
