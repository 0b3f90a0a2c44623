#include "backend/docker/bake.h"

#include <map>
#include <set>
#include <sstream>

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

// The image set is named: $SAGEBUILD_DOCKER_IMAGES must not change what a test expects.
BakeOptions hub() {
  BakeOptions o;
  o.images = "hub";
  return o;
}

nlohmann::ordered_json made(const std::vector<BakeGroup>& groups, const BakeOptions& options) {
  auto file = make_bake_file(repository_matrix(), groups, options);
  INFO((file ? "" : file.error().message));
  REQUIRE(file);
  return *file;
}

TEST_CASE("bake file for one profile matches its golden file", "[bake]") {
  const auto file = made({group("stable")}, hub());
  const std::string difference = testing::compare_golden(
      testing::testdata_dir() / "golden" / "bake-stable.json", file.dump(2) + "\n");
  INFO(difference);
  CHECK(difference.empty());
}

TEST_CASE("bake file for every profile matches its golden file", "[bake]") {
  std::vector<BakeGroup> groups;
  for (const auto& name : repository_matrix().profile_names())
    groups.push_back(group(name));
  const auto file = made(groups, hub());
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
  const auto file = made({group("sage2-all")}, hub());
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
  CHECK(seed["args"]["BASE_IMAGE"] == "nvidia/cuda:12.9.1-devel-ubuntu24.04");
  CHECK(seed["args"]["CUDA_SOURCE"] == "image");
  CHECK(seed["args"]["PYTHON_SOURCE"] == "uv");
  CHECK(seed["args"]["PYTHON_VERSION"] == "3.12");
  CHECK(seed["args"]["PYTHON_IMAGE"] == "scratch");
  CHECK(seed["dockerfile"] == "docker/Dockerfile.linux");
  CHECK_FALSE(seed.contains("secret"));  // no CA bundle given
}

// docker/Dockerfile.linux's ARG names, and whether each is used outside its own ARG line.
std::map<std::string, bool> dockerfile_args() {
  const std::string text =
      testing::read_text(testing::source_dir() / "docker" / "Dockerfile.linux");
  std::map<std::string, bool> args;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ARG ", 0) != 0) continue;
    const std::string name = line.substr(
        4, line.find('=') == std::string::npos ? std::string::npos : line.find('=') - 4);
    args[name] = text.find("${" + name + "}") != std::string::npos ||
                 text.find("${" + name + ":") != std::string::npos;
  }
  return args;
}

TEST_CASE("every build argument a target passes is declared in the Dockerfile and used", "[bake]") {
  const auto declared = dockerfile_args();
  REQUIRE(declared.size() >= 6);
  for (const auto& [name, used] : declared) {
    INFO(name);
    CHECK(used);
  }
  std::vector<BakeGroup> groups;
  for (const auto& name : repository_matrix().profile_names())
    groups.push_back(group(name));
  BakeOptions local = hub();
  local.images = "local";
  local.prebuilt_sagebuild = "sagebuild";  // SAGEBUILD_PREBUILT, passed only when given
  const std::vector<BakeGroup> local_groups = {group("docker-local")};
  for (const auto& file : {made(groups, hub()), made(local_groups, local)}) {
    for (const auto& [id, target] : file["target"].items()) {
      for (const auto& [arg, value] : target["args"].items()) {
        INFO(id << ": " << arg);
        CHECK(declared.count(arg) == 1);
      }
    }
  }
}

TEST_CASE(
    "the local image set: each toolkit's source, the base's Python when the wheel can "
    "use it, else the Python image",
    "[bake]") {
  BakeOptions o;
  o.images = "local";
  o.ca_bundle = "/etc/ssl/certs/ca-certificates.crt";
  const auto file = made({group("docker-local")}, o);
  const auto& targets = file["target"];
  REQUIRE(targets.size() == 4);
  const auto& cu124 = targets["linux-sage2-pytorch26-cu124-python3"]["args"];
  // Debian 13's CUDA 12.4 unpacked onto Debian 12, whose glibc the wheel then links against.
  CHECK(cu124["BASE_IMAGE"] == "sagebuild-base:debian12");
  CHECK(cu124["CUDA_SOURCE"] == "debian");
  CHECK(cu124["CUDA_SUITE"] == "trixie");
  CHECK(cu124["PYTHON_SOURCE"] == "system");
  CHECK(cu124["PYTHON_VERSION"] == "3.11");  // torch 2.6.0 has 3.11 wheels
  const auto& universal = targets["linux-sage2-universal-pytorch210-cu130"]["args"];
  CHECK(universal["BASE_IMAGE"] == "sagebuild-base:debian12");
  CHECK(universal["CUDA_SOURCE"] == "pypi");
  CHECK_FALSE(universal.contains("CUDA_SUITE"));  // only where a rule names one
  CHECK(universal["PYTHON_SOURCE"] == "system");
  CHECK(universal["PYTHON_VERSION"] == "3.11");
  const auto& cp312 = targets["linux-sage2-pytorch211-cu130-python312"]["args"];
  CHECK(cp312["PYTHON_SOURCE"] == "image");
  CHECK(cp312["PYTHON_IMAGE"] == "sagebuild-python:3.12");
  CHECK(cp312["PYTHON_VERSION"] == "3.12");
  for (const auto& [id, target] : targets.items()) {
    INFO(id);
    CHECK(target["secret"] ==
          nlohmann::ordered_json::array({"id=ca-bundle,src=/etc/ssl/certs/ca-certificates.crt"}));
  }
}

TEST_CASE("ccache's remote storage reaches every target as a secret read from the environment",
          "[bake]") {
  BakeOptions o;
  o.images = "local";
  o.ca_bundle = "/etc/ssl/certs/ca-certificates.crt";
  o.compile_cache_remote_env = "CCACHE_REMOTE_STORAGE";
  const auto file = made({group("docker-local")}, o);
  const std::string dockerfile =
      testing::read_text(testing::source_dir() / "docker" / "Dockerfile.linux");
  const std::string wrapper =
      testing::read_text(testing::source_dir() / "docker" / "with-build-secrets.sh");
  for (const auto& [id, target] : file["target"].items()) {
    INFO(id);
    CHECK(target["secret"] ==
          nlohmann::ordered_json::array({"id=ca-bundle,src=/etc/ssl/certs/ca-certificates.crt",
                                         "id=ccache-remote,env=CCACHE_REMOTE_STORAGE"}));
    // Each secret is mounted by the build's step and read by the wrapper it runs under.
    for (const auto& secret : target["secret"]) {
      const std::string spec = secret.get<std::string>();
      const std::string name = spec.substr(3, spec.find(',') - 3);
      INFO(name);
      CHECK(dockerfile.find("--mount=type=secret,id=" + name) != std::string::npos);
      CHECK(wrapper.find("/run/secrets/" + name) != std::string::npos);
    }
  }
  // The URL itself (a password in it, perhaps) is never written into the file.
  {
    const testing::ScopedEnv remote("CCACHE_REMOTE_STORAGE", "redis://:pw@cache.example:6379");
    CHECK(host_compile_cache_remote_env() == "CCACHE_REMOTE_STORAGE");
    BakeOptions from_host;
    from_host.images = "local";
    from_host.compile_cache_remote_env = host_compile_cache_remote_env();
    CHECK(made({group("docker-local")}, from_host).dump().find("pw@") == std::string::npos);
  }
  const testing::ScopedEnv empty("CCACHE_REMOTE_STORAGE", "");
  CHECK(host_compile_cache_remote_env().empty());
  o.compile_cache_remote_env.clear();
  o.ca_bundle.clear();
  // Held in a variable: the range-for would outlive a temporary's member.
  const auto without = made({group("docker-local")}, o);
  for (const auto& [id, target] : without["target"].items()) {
    INFO(id);
    CHECK_FALSE(target.contains("secret"));
  }
}

TEST_CASE("an entry the image set has no toolkit for is an error naming it and the set", "[bake]") {
  BakeOptions o;
  o.images = "local";
  auto file = make_bake_file(repository_matrix(), {group("sage2-all")}, o);
  REQUIRE_FALSE(file);
  CHECK_THAT(file.error().message,
             Catch::Contains("linux-sage2-pytorch28-cu129-python312: no rule of "
                             "docker.images.local") &&
                 Catch::Contains("serves CUDA 12.9"));
  o.images = "lokal";
  file = make_bake_file(repository_matrix(), {group("stable")}, o);
  REQUIRE_FALSE(file);
  CHECK_THAT(file.error().message, Catch::Contains("--images names no image set") &&
                                       Catch::Contains("did you mean 'local'"));
}

}  // namespace
}  // namespace sagebuild::backend
