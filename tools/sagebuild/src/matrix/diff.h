// What an edit to matrix.yaml does to each profile: the entries it gains and loses, and the
// entries whose wheel changes (another build tag, tags or architectures under the same id).
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
  std::vector<std::string> rebuilt;  // "id: old wheel -> new wheel" or the archs that changed

  bool empty() const {
    return state == State::changed && gained.empty() && lost.empty() && rebuilt.empty();
  }
};

// One item per profile of either matrix (after's order, then the removed ones), unchanged ones
// included (empty()). Both expanded with `options` (one package version, so that names compare).
std::vector<ProfileDiff> diff_profiles(const Matrix& before, const Matrix& after,
                                       const ExpandOptions& options);

}  // namespace sagebuild::matrix
