#include "backend/docker/docker_image.h"

#include <cstdlib>

#include <catch2/catch.hpp>

#include "matrix/loader.h"
#include "test_support.h"

namespace sagebuild::backend {
namespace {

const char* kMatrix = R"(
package: {name: demo, version: {file: VERSION, regex: '^(.+)$'}, source_dir: python}
architectures: {"8.0": ">=11.0"}
default_archs: ["8.0"]
cuda:
  "12.4": {version: "12.4.1"}
  "13.0": {version: "13.0.1", pypi: "cuda-toolkit[nvcc]==13.0.1"}
torch:
  "2.6.0": {cuda: ["12.4"], python: ["3.9", "3.13"]}
  "2.11.0": {cuda: ["13.0"], python: ["3.12", "3.13"]}
platforms: {linux: {tag: linux_x86_64, os: linux, docker: linux/amd64}}
docker:
  default: local
  images:
    local:
      - {cuda: "13.*", base: "base:{cuda}", toolkit: pypi, system_python: "3.11", python: "py:{python}"}
      - {cuda: "12.*", base: "deb:{cuda_full}", toolkit: debian, system_python: "3.11"}
    other:
      - {cuda: "*", base: "x", toolkit: image, python: uv}
    pypi:
      - {cuda: "*", base: "x", toolkit: pypi, python: uv}
profiles:
  all: {}
  py3: {include: [{abi: per-torch-py3}]}
)";

const matrix::Matrix& small() {
  static const matrix::Matrix m = [] {
    auto r = matrix::load_matrix(kMatrix, "matrix.yaml");
    REQUIRE(r.matrix);
    return *r.matrix;
  }();
  return m;
}

matrix::Entry entry(const std::string& profile, const std::string& id) {
  auto entries = matrix::expand_profile(small(), profile, {"1.0", "all"});
  REQUIRE(entries);
  for (const auto& e : *entries) {
    if (e.id == id) return e;
  }
  FAIL("no entry " << id);
  return {};
}

TEST_CASE("an entry's rule: the first whose cuda glob matches, placeholders filled", "[docker]") {
  const auto* set = small().docker->find_set("local");
  REQUIRE(set);
  auto cp312 = docker_image_for(small(), entry("all", "linux-pytorch211-cu130-python312"), *set);
  REQUIRE(cp312);
  CHECK(cp312->base == "base:13.0");
  CHECK(cp312->toolkit == matrix::DockerToolkit::pypi);
  // The base's 3.11 is not one of torch 2.11's Pythons: the entry's own, from the image.
  CHECK(cp312->python_source == DockerPython::image);
  CHECK(cp312->python_image == "py:3.12");
  auto other = docker_image_for(small(), entry("all", "linux-pytorch211-cu130-python312"),
                                *small().docker->find_set("other"));
  REQUIRE(other);
  CHECK(other->python_source == DockerPython::uv);
  CHECK(other->python.str() == "3.12");
}

TEST_CASE("a rule that cannot serve the entry says why", "[docker]") {
  const auto* set = small().docker->find_set("local");
  // torch 2.6.0 has no Python 3.11 wheel, and the CUDA 12 rule names no other source.
  auto cp39 = docker_image_for(small(), entry("all", "linux-pytorch26-cu124-python39"), *set);
  REQUIRE_FALSE(cp39);
  CHECK_THAT(cp39.error().message,
             Catch::Contains("needs Python 3.9, but the base image of docker.images.local") &&
                 Catch::Contains("has Python 3.11"));
  // CUDA 12.4 from PyPI, but matrix.yaml gives it no pypi requirement.
  auto pypi = docker_image_for(small(), entry("all", "linux-pytorch26-cu124-python39"),
                               *small().docker->find_set("pypi"));
  REQUIRE_FALSE(pypi);
  CHECK_THAT(pypi.error().message, Catch::Contains("provisions CUDA 12.4 from PyPI, but "
                                                   "matrix.yaml's cuda '12.4' has no pypi"));
}

TEST_CASE("the image set: --images, else $SAGEBUILD_DOCKER_IMAGES, else docker.default",
          "[docker]") {
  {
    const testing::ScopedEnv unset("SAGEBUILD_DOCKER_IMAGES", std::nullopt);
    CHECK((*docker_image_set(small(), ""))->name == "local");
    CHECK((*docker_image_set(small(), "other"))->name == "other");
  }
  {
    const testing::ScopedEnv other("SAGEBUILD_DOCKER_IMAGES", "other");
    CHECK((*docker_image_set(small(), ""))->name == "other");
  }
  const testing::ScopedEnv nope("SAGEBUILD_DOCKER_IMAGES", "nope");
  auto missing = docker_image_set(small(), "");
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message,
             Catch::Contains("SAGEBUILD_DOCKER_IMAGES names no image set") &&
                 Catch::Contains("there are: local, other, pypi"));
}

}  // namespace
}  // namespace sagebuild::backend
