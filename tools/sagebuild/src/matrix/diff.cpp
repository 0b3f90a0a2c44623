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

// What differs between two entries of one id, the facts a wheel follows from: "archs 8.0;9.0a ->
// 8.0;8.6;9.0a, platform tag linux_x86_64 -> manylinux_2_28_x86_64".
std::string changed_facts(const Entry& a, const Entry& b) {
  std::vector<std::string> changes;
  auto fact = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) {
      changes.push_back(
          fmt::format("{} {} -> {}", what, x.empty() ? "none" : x, y.empty() ? "none" : y));
    }
  };
  fact("package", a.package, b.package);
  fact("torch", a.torch.str(), b.torch.str());
  fact("CUDA", a.cuda_full, b.cuda_full);
  // A wheel of every Python does not follow from the interpreter that builds it.
  if (!every_python(a.abi) || !every_python(b.abi)) fact("Python", a.python.str(), b.python.str());
  fact("abi", a.abi_name(), b.abi_name());
  fact("platform tag", a.platform_tag, b.platform_tag);
  fact("fallback tag", a.fallback_platform_tag, b.fallback_platform_tag);
  fact("archs", a.arch_list(), b.arch_list());
  return text::join(changes, ", ");
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
    } else if (const std::string changes = changed_facts(*it->second, e); !changes.empty()) {
      d.rebuilt.push_back(fmt::format("{}: {}", e.id, changes));
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
