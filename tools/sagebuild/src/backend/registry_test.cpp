#include "backend/registry.h"

#include <filesystem>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "matrix/loader.h"
#include "test_support.h"

namespace sagebuild::backend {
namespace {

std::vector<matrix::Entry> entries_of(const std::string& profile, const std::string& platform) {
  static const matrix::Matrix m = [] {
    auto result = matrix::load_matrix(testing::read_text(testing::source_dir() / "matrix.yaml"),
                                      "matrix.yaml");
    REQUIRE(result.matrix);
    return *result.matrix;
  }();
  auto entries = matrix::expand_profile(m, profile, {"2.2.0", platform});
  REQUIRE(entries);
  return *entries;
}

TEST_CASE("the backend is the option's, and Windows entries get the MSVC plan", "[backend]") {
  BuildOptions o;
  const auto linux_entries = entries_of("stable", "linux");
  const auto windows_entries = entries_of("stable", "windows");
  CHECK(make_backend(o, linux_entries)->name() == std::string("native"));
  CHECK(make_backend(o, windows_entries)->name() == std::string("msvc"));
  o.backend = "docker";
  CHECK(make_backend(o, linux_entries)->name() == std::string("docker"));
  CHECK(make_backend(o, windows_entries)->name() == std::string("docker"));
}

TEST_CASE("each backend refuses the entries it does not build, naming the entry", "[backend]") {
  BuildOptions o;
  const auto windows_entries = entries_of("stable", "windows");
  auto mixed = entries_of("stable", "linux");
  mixed.push_back(windows_entries.front());

  const auto native = make_backend(o, mixed)->refuse(mixed, o);
  CHECK(native.kind == PlanProblem::Kind::usage);
  CHECK_THAT(native.message, Catch::Contains(windows_entries.front().id + " is a windows entry") &&
                                 Catch::Contains("--dry-run shows its plan"));
  const auto msvc = make_backend(o, windows_entries)->refuse(windows_entries, o);
  CHECK(msvc.kind == PlanProblem::Kind::usage);
  o.dry_run = true;
  CHECK_FALSE(make_backend(o, windows_entries)->refuse(windows_entries, o));
  o.backend = "docker";
  const auto docker = make_backend(o, mixed)->refuse(mixed, o);
  CHECK_THAT(docker.message, Catch::Contains("has no 'docker:' platform"));
  const auto linux_only = entries_of("stable", "linux");
  CHECK_FALSE(make_backend(o, linux_only)->refuse(linux_only, o));
}

TEST_CASE("each backend is one row and one folder", "[backend]") {
  std::set<std::string> names;
  for (const BackendRow& row : backend_rows()) {
    CAPTURE(row.name);
    CHECK(names.insert(row.name).second);
    CHECK(std::string(row.make()->name()) == row.name);
    // Its class and doctor section in its own folder: backend/<name>/<name>_backend.cpp.
    const auto folder = testing::source_dir() / "tools/sagebuild/src/backend" / row.name;
    CHECK(std::filesystem::exists(folder / (std::string(row.name) + "_backend.cpp")));
  }
  CHECK(selectable_backend_names() == std::vector<std::string>{"native", "docker"});
  CHECK(selectable_backend_list() == "native or docker");
}

}  // namespace
}  // namespace sagebuild::backend
