// The version a build's wheels get, from the package's one version source and what git says:
//   - a release tag build (GITHUB_REF=refs/tags/<prefix>X, or HEAD exactly at such a tag)
//     must have tag == <prefix><file version>; anything else is an error naming both and the
//     file to edit;
//   - any other build gets the file's version, or X.Y.Z.devN (N = commits since the nearest
//     release tag) when matrix.yaml's package.version.untagged says dev, with +g<commit> for
//     dev-local.
// Nothing in the user's tree is edited: the wheel is re-packed under the resolved version.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "matrix/model.h"
#include "util/expected.h"
#include "vcs/git.h"

namespace sagebuild::vcs {

struct VersionInputs {
  std::string file_version;  // as read from the version file ("2.2.0")
  std::string version_file;  // how messages name that file ("python/pyproject.toml")
  matrix::VersionSource policy;
  std::optional<GitState> git;  // nullopt outside a git checkout
  std::string github_ref;       // $GITHUB_REF, "" when unset
};

enum class BuildKind { release_tag, untagged };

struct ResolvedVersion {
  std::string version;  // what the wheels are called
  BuildKind kind = BuildKind::untagged;
  std::string tag;         // the release tag being built (release_tag builds)
  std::string tag_origin;  // "GITHUB_REF" or "HEAD"
};

Expected<ResolvedVersion> resolve_version(const VersionInputs& inputs);

// A release's tag against the wheels it attaches, as a tag build checks its own (above): the
// wheels all of one version (their public versions: a variant's local label aside), and the tag
// <prefix><that version>. file_names: the attached files' names; files that are no wheel, or
// whose names do not parse (verification refuses those), are not looked at. The version, or ""
// when no wheel is among them.
Expected<std::string> check_release_tag(std::string_view tag, std::string_view prefix,
                                        const std::vector<std::string>& file_names);

// The tag named by a GITHUB_REF like "refs/tags/v2.2.0", or "" for branches and pull requests.
std::string tag_from_github_ref(std::string_view ref);

}  // namespace sagebuild::vcs
