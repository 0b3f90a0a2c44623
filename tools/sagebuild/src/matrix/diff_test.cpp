#include "matrix/diff.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "matrix/loader.h"
#include "test_support.h"

namespace sagebuild::matrix {
namespace {

Matrix repository_matrix() {
  const auto path = testing::source_dir() / "matrix.yaml";
  const LoadResult result = load_matrix(testing::read_text(path), "matrix.yaml");
  REQUIRE(result.matrix);
  return *result.matrix;
}

const ProfileDiff& of(const std::vector<ProfileDiff>& diffs, const std::string& profile) {
  const auto it = std::find_if(diffs.begin(), diffs.end(),
                               [&](const ProfileDiff& d) { return d.profile == profile; });
  REQUIRE(it != diffs.end());
  return *it;
}

TEST_CASE("the same matrix: every profile unchanged", "[diff]") {
  const Matrix m = repository_matrix();
  const auto diffs = diff_profiles(m, m, {"2.2.0", "all"});
  CHECK(diffs.size() == m.profiles.size());
  CHECK(std::all_of(diffs.begin(), diffs.end(), [](const ProfileDiff& d) { return d.empty(); }));
}

TEST_CASE("an edit shows in every profile it reaches, and only there", "[diff]") {
  const Matrix before = repository_matrix();
  Matrix after = before;
  // Python 3.13 dropped from torch 2.9: the per-torch 2.9 cp313 wheels go wherever they were.
  for (auto& t : after.torch) {
    if (t.version.str() != "2.9.0") continue;
    std::erase_if(t.python, [](const Located<Version>& p) { return p.value.str() == "3.13"; });
  }
  // And a new profile.
  Profile extra = after.profiles.front();
  extra.name = "extra";
  after.profiles.push_back(extra);

  const auto diffs = diff_profiles(before, after, {"2.2.0", "all"});
  const ProfileDiff& current = of(diffs, "current");
  CHECK(current.gained.empty());
  REQUIRE_FALSE(current.lost.empty());
  CHECK(std::all_of(current.lost.begin(), current.lost.end(), [](const std::string& id) {
    return id.find("pytorch29") != std::string::npos && id.find("python313") != std::string::npos;
  }));
  CHECK(current.after + current.lost.size() == current.before);
  CHECK(of(diffs, "release").empty());  // one wheel for every Python: no Python to lose
  CHECK(of(diffs, "default").empty());
  CHECK(of(diffs, "extra").state == ProfileDiff::State::added);
  CHECK(of(diffs, "extra").gained.size() == of(diffs, "extra").after);
}

}  // namespace
}  // namespace sagebuild::matrix
