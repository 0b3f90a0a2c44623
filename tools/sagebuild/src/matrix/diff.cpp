#include "matrix/diff.h"

#include <map>

#include <fmt/format.h>

#include "util/text.h"

namespace sagebuild::matrix {
namespace {

using Expanded = std::vector<std::pair<std::string, std::vector<Entry>>>;

const std::vector<Entry>* find(const Expanded& profiles, const std::string& name) {
  for (const auto& [profile, entries] : profiles) {
    if (profile == name) return &entries;
  }
  return nullptr;
}

ProfileDiff compare(const std::string& name, const std::vector<Entry>* before,
                    const std::vector<Entry>* after) {
  ProfileDiff d;
  d.profile = name;
  d.state = !before  ? ProfileDiff::State::added
            : !after ? ProfileDiff::State::removed
                     : ProfileDiff::State::changed;
  static const std::vector<Entry> none;
  const auto& old_entries = before ? *before : none;
  const auto& new_entries = after ? *after : none;
  d.before = old_entries.size();
  d.after = new_entries.size();
  std::map<std::string, const Entry*> old_by_id;
  for (const Entry& e : old_entries)
    old_by_id.emplace(e.id, &e);
  std::map<std::string, bool> seen;
  for (const Entry& e : new_entries) {
    seen[e.id] = true;
    const auto it = old_by_id.find(e.id);
    if (it == old_by_id.end()) {
      d.gained.push_back(e.id);
    } else if (it->second->wheel != e.wheel) {
      d.rebuilt.push_back(fmt::format("{}: {} -> {}", e.id, it->second->wheel, e.wheel));
    } else if (it->second->archs != e.archs) {
      d.rebuilt.push_back(
          fmt::format("{}: archs {} -> {}", e.id, it->second->arch_list(), e.arch_list()));
    }
  }
  for (const Entry& e : old_entries) {
    if (!seen.count(e.id)) d.lost.push_back(e.id);
  }
  return d;
}

}  // namespace

std::vector<ProfileDiff> diff_profiles(const Matrix& before, const Matrix& after,
                                       const ExpandOptions& options) {
  const Expanded old_profiles = expand_each_profile(before, options);
  const Expanded new_profiles = expand_each_profile(after, options);
  std::vector<ProfileDiff> out;
  for (const auto& [name, entries] : new_profiles)
    out.push_back(compare(name, find(old_profiles, name), &entries));
  for (const auto& [name, entries] : old_profiles) {
    if (!find(new_profiles, name)) out.push_back(compare(name, &entries, nullptr));
  }
  return out;
}

}  // namespace sagebuild::matrix
