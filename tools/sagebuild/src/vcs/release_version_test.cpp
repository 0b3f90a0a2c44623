#include "vcs/release_version.h"

#include <catch2/catch.hpp>

namespace sagebuild::vcs {
namespace {

GitState at_tag(const std::string& tag, int distance) {
  GitState g;
  g.commit = "0123456789abcdef0123456789abcdef01234567";
  g.tag = NearestTag{tag, distance};
  g.commits_in_history = 40;
  return g;
}

VersionInputs inputs(std::optional<GitState> git, std::string ref = "",
                     matrix::UntaggedVersion untagged = matrix::UntaggedVersion::release) {
  VersionInputs in{"2.2.0", "python/pyproject.toml", {}, std::move(git), std::move(ref)};
  in.policy.untagged = untagged;
  return in;
}

TEST_CASE("GITHUB_REF names the tag only for tag refs", "[version]") {
  CHECK(tag_from_github_ref("refs/tags/v2.2.0") == "v2.2.0");
  CHECK(tag_from_github_ref("refs/heads/main").empty());
  CHECK(tag_from_github_ref("refs/pull/7/merge").empty());
  CHECK(tag_from_github_ref("").empty());
}

TEST_CASE("a release tag must equal the file's version", "[version]") {
  auto ok = resolve_version(inputs(at_tag("v2.2.0", 0)));
  REQUIRE(ok);
  CHECK(ok->kind == BuildKind::release_tag);
  CHECK(ok->tag == "v2.2.0");
  CHECK(ok->tag_origin == "HEAD");
  CHECK(ok->version == "2.2.0");

  // PEP 440 equality, not text: v2.3.0-rc1 is 2.3.0rc1.
  VersionInputs rc = inputs(at_tag("v2.3.0-rc1", 0));
  rc.file_version = "2.3.0rc1";
  CHECK(resolve_version(rc));

  auto bad = resolve_version(inputs(at_tag("v2.3.0", 0)));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message ==
        "the release tag v2.3.0 (at HEAD) says version 2.3.0, but python/pyproject.toml says "
        "2.2.0; edit the version in python/pyproject.toml to 2.3.0 (or move the tag to a commit "
        "whose version is 2.3.0)");

  // From Actions, GITHUB_REF decides, even in a checkout without tags.
  auto from_ref = resolve_version(inputs(std::nullopt, "refs/tags/v2.4.0"));
  REQUIRE_FALSE(from_ref);
  CHECK_THAT(from_ref.error().message, Catch::Contains("from GITHUB_REF"));
  // ... and a branch build is not a tag build even when HEAD happens to be tagged.
  auto branch = resolve_version(inputs(at_tag("v9.9.9", 0), "refs/heads/main"));
  REQUIRE(branch);
  CHECK(branch->kind == BuildKind::untagged);
}

TEST_CASE("untagged builds: the file's version, or a dev version when asked", "[version]") {
  auto plain = resolve_version(inputs(at_tag("v2.1.0", 3)));
  REQUIRE(plain);
  CHECK(plain->version == "2.2.0");
  CHECK(plain->kind == BuildKind::untagged);

  auto dev = resolve_version(inputs(at_tag("v2.1.0", 3), "", matrix::UntaggedVersion::dev));
  REQUIRE(dev);
  CHECK(dev->version == "2.2.0.dev3");
  auto local = resolve_version(inputs(at_tag("v2.1.0", 3), "", matrix::UntaggedVersion::dev_local));
  REQUIRE(local);
  CHECK(local->version == "2.2.0.dev3+g0123456789ab");

  GitState no_tags = at_tag("", 0);
  no_tags.tag.reset();
  auto first = resolve_version(inputs(no_tags, "", matrix::UntaggedVersion::dev));
  REQUIRE(first);
  CHECK(first->version == "2.2.0.dev40");  // every commit counts before the first release
}

TEST_CASE("dev versions refuse what would sort wrongly or cannot be counted", "[version]") {
  auto stale = resolve_version(inputs(at_tag("v2.2.0", 5), "", matrix::UntaggedVersion::dev));
  REQUIRE_FALSE(stale);
  CHECK_THAT(stale.error().message, Catch::Contains("released 5 commits ago; bump it"));

  auto no_git = resolve_version(inputs(std::nullopt, "", matrix::UntaggedVersion::dev));
  REQUIRE_FALSE(no_git);
  CHECK_THAT(no_git.error().message, Catch::Contains("not in a git checkout"));

  VersionInputs already = inputs(at_tag("v2.1.0", 1), "", matrix::UntaggedVersion::dev);
  already.file_version = "2.2.0.dev0";
  auto twice = resolve_version(already);
  REQUIRE_FALSE(twice);
  CHECK_THAT(twice.error().message, Catch::Contains("already a dev version"));
}

TEST_CASE("a release's tag names its wheels' version", "[version]") {
  const std::vector<std::string> wheels = {
      "sageattention-2.2.0+cu130torch2.11-2110.130-cp312-cp312-manylinux_2_28_x86_64.whl",
      "sageattention-2.2.0-py3-none-manylinux_2_28_x86_64.whl", "SHA256SUMS", "notes.txt"};
  auto ok = check_release_tag("v2.2.0", "v", wheels);
  REQUIRE(ok);
  CHECK(*ok == "2.2.0");
  CHECK(check_release_tag("sageattention-2.2.0", "sageattention-", wheels));
  CHECK(check_release_tag("v2.2", "v", {"sageattention-2.2-py3-none-any.whl"}));
  // No wheel: nothing to check.
  auto none = check_release_tag("nightly", "v", {"notes.txt"});
  REQUIRE(none);
  CHECK(none->empty());

  auto other = check_release_tag("v9.9.9", "v", wheels);
  REQUIRE_FALSE(other);
  CHECK(other.error().message ==
        "--tag v9.9.9 says version 9.9.9, but the wheels are version 2.2.0 (" + wheels[0] +
            "); tag the release v2.2.0, or pass --any-tag to attach them to a tag that names no "
            "version (a rolling 'nightly' release, say)");
  auto unprefixed = check_release_tag("nightly", "v", wheels);
  REQUIRE_FALSE(unprefixed);
  CHECK(unprefixed.error().message.starts_with("--tag nightly is not v<version>, but the wheels"));
  auto mixed = check_release_tag(
      "v2.2.0", "v", {wheels[0], "sageattention-2.3.0-py3-none-manylinux_2_28_x86_64.whl"});
  REQUIRE_FALSE(mixed);
  CHECK(mixed.error().message.starts_with("the wheels are of two versions, 2.2.0 ("));
}

}  // namespace
}  // namespace sagebuild::vcs
