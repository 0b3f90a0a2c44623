#include "matrix/expand.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "backend/wheel_finish.h"
#include "matrix/loader.h"
#include "test_support.h"

namespace sagebuild::matrix {
namespace {

Matrix load(const std::filesystem::path& path) {
  const LoadResult result = load_matrix(testing::read_text(path), path.filename().string());
  REQUIRE(result.matrix);
  return *result.matrix;
}

const Matrix& repository_matrix() {
  static const Matrix m = load(testing::source_dir() / "matrix.yaml");
  return m;
}

std::vector<Entry> entries(const Matrix& m, std::string_view profile, std::string platform) {
  auto result = expand_profile(m, profile, {"2.2.0", std::move(platform)});
  INFO((result ? "" : result.error().message));
  REQUIRE(result);
  return *result;
}

std::vector<std::string> ids(const std::vector<Entry>& list) {
  std::vector<std::string> out;
  for (const auto& e : list)
    out.push_back(e.id);
  return out;
}

TEST_CASE("sage2-all lists exactly the seeds' ten Linux entries", "[expand][seeds]") {
  const auto list = entries(repository_matrix(), "sage2-all", "linux");
  const std::vector<std::string> expected_ids = {
      "linux-sage2-pytorch26-cu126-python39",  "linux-sage2-pytorch26-cu126-python310",
      "linux-sage2-pytorch26-cu126-python311", "linux-sage2-pytorch26-cu126-python312",
      "linux-sage2-pytorch27-cu128-python310", "linux-sage2-pytorch27-cu128-python311",
      "linux-sage2-pytorch27-cu128-python312", "linux-sage2-pytorch28-cu129-python310",
      "linux-sage2-pytorch28-cu129-python311", "linux-sage2-pytorch28-cu129-python312",
  };
  CHECK(ids(list) == expected_ids);
  CHECK(backend::identity_of(list[0]).build_tag == "260.126");
  // The seeds' names, with the manylinux tag a wheel earns (and the tag it keeps when it does
  // not: the seeds' linux_x86_64).
  CHECK(backend::identity_of(list[0]).file_name ==
        "sageattention-2.2.0-260.126-cp39-cp39-manylinux_2_28_x86_64.whl");
  CHECK(backend::identity_of(list[6]).file_name ==
        "sageattention-2.2.0-270.128-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK(backend::identity_of(list[9]).build_tag == "280.129");
  CHECK(backend::identity_of(list[9]).file_name ==
        "sageattention-2.2.0-280.129-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK(backend::identity_of(list[9]).fallback_file_name ==
        "sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl");
  CHECK(backend::identity_of(list[9]).torch_requirement == "torch==2.8.*");
  CHECK(backend::identity_of(list[9]).glibc_floor == "2.28");  // from manylinux_2_28
  CHECK(list[9].cuda_full == "12.9.1");
  // CUDA 12.6 cannot target sm_120, so the default list loses it there and keeps it for 12.8+.
  CHECK(list[0].arch_list() == "8.0;8.6;8.9;9.0a");
  CHECK(list[9].arch_list() == "8.0;8.6;8.9;9.0a;12.0");
}

TEST_CASE("the seeds' profiles keep their sizes", "[expand][seeds]") {
  const Matrix& m = repository_matrix();
  const std::vector<std::pair<std::string, std::size_t>> sizes = {
      {"sage2-all", 10}, {"stable", 3},    {"default", 1},   {"pytorch26", 4}, {"pytorch27", 3},
      {"pytorch28", 3},  {"python310", 3}, {"python311", 3}, {"python312", 3},
  };
  for (const auto& [profile, size] : sizes) {
    INFO(profile);
    CHECK(entries(m, profile, "linux").size() == size);
    CHECK(entries(m, profile, "windows").size() == size);
    CHECK(entries(m, profile, "all").size() == 2 * size);
  }
  CHECK(ids(entries(m, "stable", "linux")) ==
        std::vector<std::string>{"linux-sage2-pytorch26-cu126-python312",
                                 "linux-sage2-pytorch27-cu128-python312",
                                 "linux-sage2-pytorch28-cu129-python312"});
  const auto default_entry = entries(m, "default", "windows");
  CHECK(backend::identity_of(default_entry[0]).file_name ==
        "sageattention-2.2.0-280.129-cp312-cp312-win_amd64.whl");
  CHECK(backend::identity_of(default_entry[0]).glibc_floor.empty());
  CHECK(ids(entries(m, "python310", "linux"))[0] == "linux-sage2-pytorch26-cu126-python310");
}

TEST_CASE("the machines' profiles", "[expand]") {
  const Matrix& m = repository_matrix();
  const auto native = entries(m, "native-cu130", "all");
  REQUIRE(native.size() == 5);
  for (const auto& e : native) {
    CHECK(e.cuda.str() == "13.0");
    CHECK(e.torch.str() == (e.abi == Abi::stable ? "2.10.0" : "2.11.0"));
    CHECK(e.platform == "linux");
  }
  CHECK(native.back().id == "linux-sage2-universal-pytorch210-cu130");
  const auto gpu = entries(m, "gpu-h100", "linux");
  REQUIRE(gpu.size() == 1);
  CHECK(gpu[0].python.str() == "3.12");
  CHECK(gpu[0].arch_list() == "8.0;8.6;8.9;9.0a;12.0");
  CHECK(backend::identity_of(gpu[0]).build_tag == "2110.130");
}

TEST_CASE("latest keeps the newest value among entries equal on the other axes", "[expand]") {
  const Matrix m = load(testing::testdata_dir() / "small.yaml");
  // all: linux+windows x (2.6.0/12.6/{3.9,3.10}, 2.7.0/{12.6,12.8}/{3.10,3.11}) = 2 x 6
  CHECK(entries(m, "all", "all").size() == 12);
  // newest: latest python, then latest cuda -> 2.6.0/12.6/3.10 and 2.7.0/12.8/3.11 per platform
  const auto newest = entries(m, "newest", "linux");
  REQUIRE(newest.size() == 2);
  CHECK(newest[0].id == "linux-pytorch26-cu126-python310");
  CHECK(newest[1].id == "linux-pytorch27-cu128-python311");
}

TEST_CASE("argument errors name the choices", "[expand]") {
  const Matrix& m = repository_matrix();
  auto unknown = expand_profile(m, "stabel", {"2.2.0", "all"});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.starts_with("unknown profile 'stabel' (did you mean 'stable'?)"));
  auto platform = expand_profile(m, "stable", {"2.2.0", "linx"});
  REQUIRE_FALSE(platform);
  CHECK(platform.error().message ==
        "unknown platform 'linx' (did you mean 'linux'?); choose one of: linux, windows, all");
  auto empty = expand_profile(m, "gpu-h100", {"2.2.0", "windows"});
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message == "profile 'gpu-h100' has no entries for platform 'windows'");
}

TEST_CASE("entry id templates are checked", "[expand]") {
  CHECK_FALSE(check_entry_id_template("{platform}-{torch_major}"));
  CHECK(check_entry_id_template("{platfrom}")->starts_with("package.entry_id is not a valid"));
  CHECK(check_entry_id_template("{torch}")->starts_with("package.entry_id gives ids like '2.8.0'"));
  CHECK(check_entry_id_template("{"));
}

TEST_CASE("universal wheels: one per platform and CUDA, torch from the target on", "[expand]") {
  const Matrix& m = repository_matrix();
  const auto universal = entries(m, "universal", "linux");
  REQUIRE(universal.size() == 2);
  const Entry& cu130 = universal[1];
  CHECK(cu130.id == "linux-sage2-universal-pytorch210-cu130");
  CHECK(cu130.abi == Abi::stable);
  CHECK(cu130.torch.str() == "2.10.0");
  CHECK(backend::identity_of(cu130).build_tag == "2100.130");
  CHECK(backend::identity_of(cu130).file_name ==
        "sageattention-2.2.0-2100.130-py3-none-manylinux_2_28_x86_64.whl");
  CHECK(backend::identity_of(cu130).torch_requirement == "torch>=2.10");
  CHECK(backend::identity_of(universal[0]).file_name ==
        "sageattention-2.2.0-2100.128-py3-none-manylinux_2_28_x86_64.whl");
  // The release ships them with the seeds' per-torch wheels and torch 2.9's.
  const auto release = entries(m, "release", "linux");
  CHECK(std::count_if(release.begin(), release.end(),
                      [](const Entry& e) { return e.abi == Abi::stable; }) == 2);
  CHECK(std::none_of(release.begin(), release.end(), [](const Entry& e) {
    return e.abi == Abi::per_torch && e.torch >= *Version::parse("2.10.0");
  }));
  // The seeds' profiles hold no stable-ABI entry.
  for (const char* profile : {"sage2-all", "stable", "default"}) {
    for (const Entry& e : entries(m, profile, "all"))
      CHECK(e.abi == Abi::per_torch);
  }
}

// matrix.yaml with `profile_yaml` (lines indented as a profile) added at the end of profiles:.
Matrix with_profile(const std::string& profile_yaml) {
  const std::string text = testing::read_text(testing::source_dir() / "matrix.yaml") + profile_yaml;
  const LoadResult result = load_matrix(text, "matrix.yaml");
  REQUIRE(result.matrix);
  return *result.matrix;
}

TEST_CASE("universal entries are off the python axis", "[expand][universal]") {
  // Excluding a Python drops per-Python wheels, never the wheels that serve every Python.
  const Matrix m = with_profile(
      "  no-py314:\n    from: [release]\n    exclude: [{python: \"3.14\"}]\n"
      "  only-py312:\n    include: [{python: \"3.12\"}]\n");
  const auto release = ids(entries(m, "release", "all"));
  const auto kept = ids(entries(m, "no-py314", "all"));
  CHECK(std::count_if(kept.begin(), kept.end(), [](const std::string& id) {
          return id.find("universal") != std::string::npos;
        }) == std::count_if(release.begin(), release.end(), [](const std::string& id) {
          return id.find("universal") != std::string::npos;
        }));
  // A rule naming a Python selects per-Python wheels only.
  for (const Entry& e : entries(m, "only-py312", "all")) {
    CHECK(e.abi == Abi::per_torch);
    CHECK(e.python.str() == "3.12");
  }
}

TEST_CASE("a rule asking for a universal wheel of one Python says why it selects nothing",
          "[expand][universal]") {
  const std::string text = testing::read_text(testing::source_dir() / "matrix.yaml") +
                           "  odd:\n    include: [{abi: stable, python: \"3.12\"}]\n";
  const LoadResult result = load_matrix(text, "matrix.yaml");
  CHECK_FALSE(result.matrix);
  CHECK(std::any_of(result.diagnostics.begin(), result.diagnostics.end(), [](const auto& d) {
    return d.message.find("have no Python") != std::string::npos;
  }));
}

TEST_CASE("per-torch-py3: one py3-none wheel per torch and CUDA, pinned, opt-in", "[expand][py3]") {
  const Matrix& m = repository_matrix();
  const auto list = entries(m, "native-cu130-py3", "all");
  REQUIRE(list.size() == 1);
  const Entry& e = list[0];
  CHECK(e.id == "linux-sage2-pytorch211-cu130-python3");
  CHECK(e.abi == Abi::per_torch_py3);
  CHECK(backend::identity_of(e).file_name ==
        "sageattention-2.2.0-2110.130-py3-none-manylinux_2_28_x86_64.whl");
  CHECK(backend::identity_of(e).torch_requirement == "torch==2.11.*");
  CHECK(e.python.str() == "3.14");  // the newest of torch 2.11's Pythons is tried first

  // Opt-in: a profile whose rules do not name the abi never takes one.
  for (const char* profile : {"cu130", "current", "native-cu130", "sage2-all"}) {
    for (const Entry& x : entries(m, profile, "all"))
      CHECK(x.abi != Abi::per_torch_py3);
  }
  // The release: one per torch before the stable ABI, and the universal wheels; every wheel
  // for every Python.
  const auto release = entries(m, "release", "linux");
  CHECK(ids(release) == std::vector<std::string>{
                            "linux-sage2-pytorch26-cu126-python3",
                            "linux-sage2-pytorch27-cu128-python3",
                            "linux-sage2-pytorch28-cu129-python3",
                            "linux-sage2-pytorch29-cu128-python3",
                            "linux-sage2-universal-pytorch210-cu128",
                            "linux-sage2-universal-pytorch210-cu130",
                        });
}

}  // namespace
}  // namespace sagebuild::matrix
