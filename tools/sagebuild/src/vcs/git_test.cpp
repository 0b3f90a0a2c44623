#include "vcs/git.h"

#include <fstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "platform/process.h"
#include "util/fs.h"
#include "vcs/release_version.h"

namespace sagebuild::vcs {
namespace {

namespace stdfs = std::filesystem;

// A real repository made with the git executable (what users and actions/checkout make); the
// code under test reads it through libgit2 only. Tests that make one are tagged [git-cli]: the
// Windows build's run under Wine (scripts/windows-test.sh) has no git program.
class Repo {
 public:
  Repo() : dir_("sagebuild-git") { git({"init", "-q", "-b", "main", "."}); }

  const stdfs::path& path() const { return dir_.path(); }

  std::string git(std::vector<std::string> args, const stdfs::path& where = {}) const {
    args.insert(args.begin(), "git");
    auto r = platform::run_process(
        args, {.working_directory = where.empty() ? dir_.path() : where,
               // Fixed identity and dates: tests must not depend on the user's git config.
               .environment = {{"GIT_AUTHOR_NAME", "Test"},
                               {"GIT_AUTHOR_EMAIL", "test@example.invalid"},
                               {"GIT_COMMITTER_NAME", "Test"},
                               {"GIT_COMMITTER_EMAIL", "test@example.invalid"},
                               {"GIT_CONFIG_GLOBAL", "/dev/null"},
                               {"GIT_CONFIG_NOSYSTEM", "1"},
                               {"GIT_COMMITTER_DATE", fmt::format("@{} +0000", next_time_)},
                               {"GIT_AUTHOR_DATE", fmt::format("@{} +0000", next_time_)}},
               .timeout = std::chrono::seconds(30)});
    REQUIRE(r);
    INFO(r->output);
    REQUIRE(r->ok());
    return r->output;
  }

  void commit(const std::string& content) {
    std::ofstream(dir_.path() / "file.txt") << content;
    git({"add", "file.txt"});
    next_time_ += 60;
    git({"commit", "-q", "-m", content});
  }

  std::int64_t last_time() const { return next_time_; }

 private:
  fs::TempDir dir_;
  std::int64_t next_time_ = 1700000000;
};

GitState read(const stdfs::path& path, const std::string& prefix = "v") {
  auto state = read_git_state(path, prefix);
  INFO((state ? std::string() : state.error().message));
  REQUIRE(state);
  REQUIRE(state->has_value());
  return **state;
}

TEST_CASE("outside a repository there is no git state, and that is not an error", "[git]") {
  fs::TempDir dir("sagebuild-nogit");
  auto state = read_git_state(dir.path(), "v");
  REQUIRE(state);
  CHECK_FALSE(state->has_value());
}

TEST_CASE("a repository without commits is a clear error", "[git][git-cli]") {
  Repo repo;
  auto state = read_git_state(repo.path(), "v");
  REQUIRE_FALSE(state);
  CHECK_THAT(state.error().message, Catch::Contains("no commit yet"));
}

TEST_CASE("commit, time, branch and history without tags", "[git][git-cli]") {
  Repo repo;
  repo.commit("one");
  repo.commit("two");
  const GitState s = read(repo.path());
  CHECK(s.commit == repo.git({"rev-parse", "HEAD"}).substr(0, 40));
  CHECK(s.commit_time == repo.last_time());
  CHECK(s.branch == "main");
  CHECK_FALSE(s.detached);
  CHECK_FALSE(s.dirty);
  CHECK_FALSE(s.shallow);
  CHECK_FALSE(s.tag.has_value());
  CHECK(s.commits_in_history == 2);
}

TEST_CASE("lightweight and annotated tags, distance, and the prefix filter", "[git][git-cli]") {
  Repo repo;
  repo.commit("one");
  repo.git({"tag", "v1.0.0"});  // lightweight
  repo.commit("two");
  repo.git({"tag", "not-a-release"});
  repo.commit("three");
  GitState s = read(repo.path());
  REQUIRE(s.tag);
  CHECK(s.tag->name == "v1.0.0");
  CHECK(s.tag->distance == 2);

  repo.git({"tag", "-a", "v1.1.0-rc-1", "-m", "annotated, with dashes"});
  s = read(repo.path());
  REQUIRE(s.tag);
  CHECK(s.tag->name == "v1.1.0-rc-1");
  CHECK(s.tag->distance == 0);

  // Another prefix sees only its own tags.
  s = read(repo.path(), "release-");
  CHECK_FALSE(s.tag.has_value());
}

TEST_CASE("modified tracked files make the tree dirty; untracked files do not", "[git][git-cli]") {
  Repo repo;
  repo.commit("one");
  std::ofstream(repo.path() / "untracked.txt") << "x";
  CHECK_FALSE(read(repo.path()).dirty);
  std::ofstream(repo.path() / "file.txt") << "changed";
  GitState s = read(repo.path());
  CHECK(s.dirty);
  CHECK(s.dirty_paths == std::vector<std::string>{"file.txt"});
  repo.git({"add", "file.txt"});  // staged counts too
  CHECK(read(repo.path()).dirty);
}

TEST_CASE("detached HEAD at a tag, read from a subdirectory", "[git][git-cli]") {
  Repo repo;
  repo.commit("one");
  repo.git({"tag", "-a", "v2.0.0", "-m", "release"});
  repo.commit("two");
  repo.git({"checkout", "-q", "v2.0.0"});
  stdfs::create_directories(repo.path() / "python" / "pkg");
  const GitState s = read(repo.path() / "python" / "pkg");
  CHECK(s.detached);
  CHECK(s.branch.empty());
  REQUIRE(s.tag);
  CHECK(s.tag->distance == 0);
  CHECK(stdfs::equivalent(s.workdir, repo.path()));
}

TEST_CASE("a shallow clone as actions/checkout makes it: one commit, no tags", "[git][git-cli]") {
  Repo origin;
  origin.commit("one");
  origin.git({"tag", "v1.0.0"});
  origin.commit("two");
  origin.commit("three");
  fs::TempDir clone_parent("sagebuild-clone");
  origin.git({"clone", "-q", "--depth", "1", "--no-tags", "file://" + origin.path().string(),
              (clone_parent.path() / "c").string()});
  const GitState s = read(clone_parent.path() / "c");
  CHECK(s.shallow);
  CHECK_FALSE(s.tag.has_value());
  CHECK_FALSE(s.commits_in_history.has_value());

  // Dev versions cannot be counted there: a clear error, not a wrong number.
  VersionInputs in{"1.1.0", "python/pyproject.toml", {}, s, ""};
  in.policy.untagged = matrix::UntaggedVersion::dev;
  auto v = resolve_version(in);
  REQUIRE_FALSE(v);
  CHECK_THAT(v.error().message, Catch::Contains("fetch-depth: 0"));
}

}  // namespace
}  // namespace sagebuild::vcs
