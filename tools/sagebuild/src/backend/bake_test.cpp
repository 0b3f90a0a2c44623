#include "backend/bake.h"

#include <set>

#include <catch2/catch.hpp>

#include "matrix/loader.h"
#include "test_support.h"

namespace sagebuild::backend {
namespace {

const matrix::Matrix& repository_matrix() {
  static const matrix::Matrix m = [] {
    auto result = matrix::load_matrix(testing::read_text(testing::source_dir() / "matrix.yaml"),
                                      "matrix.yaml");
    REQUIRE(result.matrix);
    return *result.matrix;
  }();
  return m;
}

BakeGroup group(const std::string& profile) {
  auto entries = matrix::expand_profile(repository_matrix(), profile, {"2.2.0", "all"});
  REQUIRE(entries);
  return {profile, *entries};
}

TEST_CASE("bake file for one profile matches its golden file", "[bake]") {
  const auto file = make_bake_file({group("stable")}, {});
  const std::string difference = testing::compare_golden(
      testing::testdata_dir() / "golden" / "bake-stable.json", file.dump(2) + "\n");
  INFO(difference);
  CHECK(difference.empty());
}

TEST_CASE("bake file for every profile matches its golden file", "[bake]") {
  std::vector<BakeGroup> groups;
  for (const auto& name : repository_matrix().profile_names())
    groups.push_back(group(name));
  const auto file = make_bake_file(groups, {});
  const std::string difference = testing::compare_golden(
      testing::testdata_dir() / "golden" / "bake-all.json", file.dump(2) + "\n");
  INFO(difference);
  CHECK(difference.empty());
}

// The attributes a target may have, from the Bake file reference (docs: "target" block).
TEST_CASE("bake targets use only attributes of the Bake file reference", "[bake]") {
  const std::set<std::string> reference = {"args",
                                           "annotations",
                                           "attest",
                                           "cache-from",
                                           "cache-to",
                                           "call",
                                           "context",
                                           "contexts",
                                           "description",
                                           "dockerfile",
                                           "dockerfile-inline",
                                           "entitlements",
                                           "inherits",
                                           "labels",
                                           "matrix",
                                           "name",
                                           "network",
                                           "no-cache",
                                           "no-cache-filter",
                                           "output",
                                           "platforms",
                                           "pull",
                                           "secret",
                                           "shm-size",
                                           "ssh",
                                           "tags",
                                           "target",
                                           "ulimits"};
  const auto file = make_bake_file({group("sage2-all")}, {});
  REQUIRE(file.contains("group"));
  REQUIRE(file.contains("target"));
  CHECK(file["target"].size() == 10);  // Windows entries are built natively, not by Bake
  for (const auto& [name, target] : file["target"].items()) {
    INFO(name);
    CHECK(name.rfind("linux-sage2-", 0) == 0);
    for (const auto& [key, value] : target.items())
      CHECK(reference.count(key) == 1);
    for (const auto& [arg, value] : target["args"].items())
      CHECK(value.is_string());
    CHECK(target["output"] == nlohmann::ordered_json::array({"type=local,dest=dist"}));
  }
  CHECK(file["group"]["sage2-all"]["targets"].size() == 10);
  CHECK(file["group"]["default"] == file["group"]["sage2-all"]);
  const auto& seed = file["target"]["linux-sage2-pytorch28-cu129-python312"];
  CHECK(seed["args"]["TORCH_VERSION"] == "2.8.0");
  CHECK(seed["args"]["CUDA_VERSION"] == "12.9.1");
  CHECK(seed["args"]["PYTHON_VERSION"] == "3.12");
  CHECK(seed["args"]["TORCH_CUDA_ARCH_LIST"] == "8.0;8.6;8.9;9.0a;12.0");
  CHECK(seed["dockerfile"] == "docker/Dockerfile.linux");
}

}  // namespace
}  // namespace sagebuild::backend
