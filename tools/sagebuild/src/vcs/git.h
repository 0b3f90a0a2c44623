// What git says about a source tree, read through libgit2 (no git executable needed): the
// commit, its time, whether tracked files are modified, and the nearest release tag with the
// distance to it, as `git describe --tags --match '<prefix>*'` computes it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"

namespace sagebuild::vcs {

struct NearestTag {
  std::string name;  // "v2.2.0"
  int distance = 0;  // commits on HEAD's side since the tag; 0: HEAD is the tagged commit
};

struct GitState {
  std::filesystem::path workdir;
  std::string commit;                    // full hex of HEAD's commit
  std::int64_t commit_time = 0;          // committer time, seconds since the epoch
  bool dirty = false;                    // a tracked file differs from HEAD (index or worktree)
  std::vector<std::string> dirty_paths;  // the first few of them, for messages
  bool detached = false;
  std::string branch;  // short name when on a branch
  bool shallow = false;
  std::optional<NearestTag> tag;  // nearest tag matching the prefix, when history has one
  // Commits reachable from HEAD; not counted in a shallow clone, whose history is cut off (and
  // which libgit2 1.5 cannot walk to the cut).
  std::optional<int> commits_in_history;
};

// Reads the repository containing `path`. Returns nullopt when `path` is in no repository;
// an error for a repository that cannot be read or that has no commit yet.
Expected<std::optional<GitState>> read_git_state(const std::filesystem::path& path,
                                                 const std::string& tag_prefix);

// The content of `file` (in the working tree of a repository) as it is at `revision` ("HEAD",
// "v2.2.0", "main~3", a commit). Errors: no repository, an unknown revision, a file the revision
// does not have, a blob over `max_bytes`.
Expected<std::string> read_file_at_revision(const std::filesystem::path& file,
                                            const std::string& revision,
                                            std::size_t max_bytes = 1u << 20);

}  // namespace sagebuild::vcs
