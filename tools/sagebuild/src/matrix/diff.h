// What an edit to matrix.yaml does to each profile: the entries it gains and loses, and the
// entries whose wheel changes under the same id (another toolkit, platform tag, fallback tag or
// list of architectures: the facts a wheel follows from).
// `sagebuild matrix diff REV` shows it against matrix.yaml at a git revision, so that a rule
// edited for one profile cannot silently grow another.
#pragma once

#include <string>
#include <vector>

#include "matrix/expand.h"
#include "matrix/model.h"

namespace sagebuild::matrix {

struct ProfileDiff {
  std::string profile;
  enum class State { changed, added, removed } state = State::changed;
  std::size_t before = 0;  // entries
  std::size_t after = 0;
  std::vector<std::string> gained;   // ids
  std::vector<std::string> lost;     // ids
  std::vector<std::string> rebuilt;  // "id: archs 8.0;9.0a -> 8.0;8.6;9.0a, CUDA 12.9.0 -> 12.9.1"

  bool empty() const {
    return state == State::changed && gained.empty() && lost.empty() && rebuilt.empty();
  }
};

// One item per profile of either matrix (after's order, then the removed ones), unchanged ones
// included (empty()). Both expanded with `options` (one package version, so that names compare).
std::vector<ProfileDiff> diff_profiles(const Matrix& before, const Matrix& after,
                                       const ExpandOptions& options);

}  // namespace sagebuild::matrix
