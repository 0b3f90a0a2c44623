#include "matrix/expand.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/args.h>
#include <fmt/format.h>

#include "matrix/profile_graph.h"
#include "util/glob.h"
#include "util/text.h"

namespace sagebuild::matrix {
namespace {

// A valid combination; pointers refer into the Matrix, which outlives every selection.
struct Combination {
  std::size_t platform_index;
  const Platform* platform;
  const TorchRelease* torch;
  const CudaToolkit* cuda;
  Version python;
  Abi abi = Abi::per_torch;
  std::size_t universe_index = 0;  // its place in the sorted universe: the same order as sort_key
};

auto sort_key(const Combination& c) {
  return std::tie(c.platform_index, c.abi, c.torch->version, c.cuda->version, c.python);
}

bool same_combination(const Combination& a, const Combination& b) {
  return sort_key(a) == sort_key(b);
}

// A combination whose one wheel serves every Python (stable ABI, per-torch-py3) is off the python
// axis (its value there is empty), so a rule that names Pythons ("3.12", "3.1*") selects and
// drops per-Python wheels only, and excluding Python 3.14 does not drop the universal wheels. Its
// build interpreter (Combination::python) is a detail of the build.
std::string axis_value(const Combination& c, Axis axis) {
  switch (axis) {
    case Axis::torch:
      return c.torch->version.str();
    case Axis::cuda:
      return c.cuda->version.str();
    case Axis::python:
      return every_python(c.abi) ? std::string() : c.python.str();
    case Axis::platform:
      return c.platform->name;
    case Axis::abi:
      return abi_name(c.abi);
  }
  return {};
}

std::string describe(const Combination& c) {
  if (c.abi == Abi::stable) {
    return fmt::format("{} stable ABI from torch {} CUDA {}", c.platform->name,
                       c.torch->version.str(), c.cuda->version.str());
  }
  if (c.abi == Abi::per_torch_py3) {
    return fmt::format("{} torch {} CUDA {} every Python", c.platform->name, c.torch->version.str(),
                       c.cuda->version.str());
  }
  return fmt::format("{} torch {} CUDA {} Python {}", c.platform->name, c.torch->version.str(),
                     c.cuda->version.str(), c.python.str());
}

// The entry_id fields that would separate two combinations whose ids clash.
std::string distinguishing_fields(const Combination& a, const Combination& b) {
  if (a.abi != b.abi) return "{abi}";
  if (a.platform != b.platform) return "{platform}";
  if (a.torch != b.torch) return "{torch_patch}";
  if (a.cuda != b.cuda) return "{cuda_major}{cuda_minor}";
  return "{python_major}{python_minor}";
}

bool matches(const Selector& selector, const Combination& c) {
  for (const Selector::Field& field : selector.fields) {
    const std::string value = axis_value(c, field.axis);
    const bool any = std::any_of(field.patterns.begin(), field.patterns.end(),
                                 [&](const auto& p) { return glob::matches(p.value, value); });
    if (!any) return false;
  }
  return true;
}

fmt::dynamic_format_arg_store<fmt::format_context> id_fields(const std::string& platform,
                                                             const Version& torch,
                                                             const Version& cuda,
                                                             const Version& python, Abi abi) {
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  args.push_back(fmt::arg("platform", platform));
  args.push_back(fmt::arg("abi", abi_name(abi)));
  args.push_back(fmt::arg("torch", torch.str()));
  args.push_back(fmt::arg("torch_major", torch.major()));
  args.push_back(fmt::arg("torch_minor", torch.minor()));
  args.push_back(fmt::arg("torch_patch", torch.patch()));
  args.push_back(fmt::arg("cuda", cuda.str()));
  args.push_back(fmt::arg("cuda_major", cuda.major()));
  args.push_back(fmt::arg("cuda_minor", cuda.minor()));
  if (abi == Abi::per_torch_py3) {
    // Every Python 3: "python{python_major}{python_minor}" reads "python3".
    args.push_back(fmt::arg("python", std::string("3")));
    args.push_back(fmt::arg("python_major", python.major()));
    args.push_back(fmt::arg("python_minor", std::string()));
    return args;
  }
  args.push_back(fmt::arg("python", python.str()));
  args.push_back(fmt::arg("python_major", python.major()));
  args.push_back(fmt::arg("python_minor", python.minor()));
  return args;
}

const char* const kIdFieldList =
    "platform, abi, torch, torch_major, torch_minor, torch_patch, cuda, cuda_major, cuda_minor, "
    "python, python_major, python_minor";

// Ids become Docker Bake target names and GitHub job names: letters, digits, '-' and '_'.
bool is_valid_id(const std::string& id) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  return !id.empty() && alnum(id.front()) && std::all_of(id.begin(), id.end(), [&](char c) {
    return alnum(c) || c == '_' || c == '-';
  });
}

const std::string& id_template(const Matrix& m, Abi abi) {
  return abi == Abi::stable ? m.package.entry_id_stable_template : m.package.entry_id_template;
}

std::string render_id(const Matrix& m, const std::string& platform, const Version& torch,
                      const Version& cuda, const Version& python, Abi abi) {
  return fmt::vformat(id_template(m, abi), id_fields(platform, torch, cuda, python, abi));
}

std::string render_id(const Matrix& m, const Combination& c) {
  return render_id(m, c.platform->name, c.torch->version, c.cuda->version, c.python, c.abi);
}

class CombinationSelector {
 public:
  explicit CombinationSelector(const Matrix& m) : m_(m), graph_(m) {
    for (std::size_t p = 0; p < m.platforms.size(); ++p) {
      for (const TorchRelease& torch : m.torch) {
        for (const auto& cuda : torch.cuda) {
          const CudaToolkit* toolkit = m.find_cuda(cuda.value);
          if (!toolkit) continue;  // reported by the loader
          for (const auto& python : torch.python) {
            universe_.push_back({p, &m.platforms[p], &torch, toolkit, python.value});
          }
          // One wheel for every Python of this torch, built with the newest of them.
          if (!torch.python.empty()) {
            Version newest = torch.python.front().value;
            for (const auto& python : torch.python)
              newest = std::max(newest, python.value);
            universe_.push_back({p, &m.platforms[p], &torch, toolkit, newest, Abi::per_torch_py3});
          }
        }
      }
      add_stable_combinations(p);
    }
    std::sort(universe_.begin(), universe_.end(),
              [](const auto& a, const auto& b) { return sort_key(a) < sort_key(b); });
    for (std::size_t i = 0; i < universe_.size(); ++i)
      universe_[i].universe_index = i;
  }

  const std::vector<Combination>& universe() const { return universe_; }
  const ProfileGraph& graph() const { return graph_; }

  // The stable-ABI combinations of platform p: one per CUDA that a torch release from the
  // target on was published for, and stable_abi.extra_cuda; torch is the target, Python the
  // newest it supports.
  void add_stable_combinations(std::size_t p) {
    if (!m_.stable_abi) return;
    const TorchRelease* target = m_.find_torch(m_.stable_abi->target);
    if (!target || target->python.empty()) return;  // reported by the loader
    Version python = target->python.front().value;
    for (const auto& v : target->python)
      python = std::max(python, v.value);
    std::set<Version> cudas;
    for (const TorchRelease& torch : m_.torch) {
      if (torch.version < target->version) continue;
      for (const auto& cuda : torch.cuda) {
        if (m_.find_cuda(cuda.value)) cudas.insert(cuda.value);
      }
    }
    for (const auto& cuda : m_.stable_abi->extra_cuda) {
      if (m_.find_cuda(cuda.value)) cudas.insert(cuda.value);
    }
    for (const Version& cuda : cudas) {
      universe_.push_back({p, &m_.platforms[p], target, m_.find_cuda(cuda), python, Abi::stable});
    }
  }

  // The selection of a profile; problems of its own rules go to `diagnostics` when given.
  // A profile on or above a cycle of 'from' selects nothing; validate_profiles reports the cycle.
  std::vector<Combination> select(const Profile& profile, Diagnostics* diagnostics) {
    const std::size_t index = graph_.find(profile.name);
    if (index == ProfileGraph::npos || graph_.reaches_cycle(index)) return {};
    // The bases' selections first, each once (a diamond of 'from' shares them), deepest first
    // and without recursion: a chain of thousands of profiles is a loop, not a deep stack.
    std::vector<std::size_t> pending{index};
    while (!pending.empty()) {
      const std::size_t node = pending.back();
      bool ready = true;
      for (const std::size_t base : graph_.bases(node)) {
        if (!memo_.contains(base)) {
          pending.push_back(base);
          ready = false;
        }
      }
      if (!ready) continue;
      pending.pop_back();
      if (node != index && !memo_.contains(node)) memo_[node] = select_uncached(node, nullptr);
    }
    if (!diagnostics) {
      if (auto it = memo_.find(index); it != memo_.end()) return it->second;
    }
    std::vector<Combination> result = select_uncached(index, diagnostics);
    memo_[index] = result;
    return result;
  }

 private:
  // One profile's selection, its bases' selections already in memo_.
  std::vector<Combination> select_uncached(std::size_t index, Diagnostics* diagnostics) {
    const Profile& profile = m_.profiles[index];
    std::vector<Combination> base;
    if (profile.from.empty()) {
      base = universe_;
    } else {
      // Each base's selection is sorted and free of duplicates: their union is a linear merge.
      for (const std::size_t parent : graph_.bases(index)) {
        const auto& selected = memo_.at(parent);
        std::vector<Combination> merged;
        merged.reserve(base.size() + selected.size());
        std::set_union(
            base.begin(), base.end(), selected.begin(), selected.end(), std::back_inserter(merged),
            [](const auto& a, const auto& b) { return a.universe_index < b.universe_index; });
        base = std::move(merged);
      }
    }

    std::vector<Combination> kept;
    // per-torch-py3 is opt-in: from every combination, only a rule that names its abi takes
    // it (a profile built on others keeps what they chose).
    auto names_abi = [](const Selector& s) {
      return std::any_of(s.fields.begin(), s.fields.end(),
                         [](const Selector::Field& f) { return f.axis == Axis::abi; });
    };
    for (const Combination& c : base) {
      bool keep = true;
      if (profile.include) {
        keep =
            std::any_of(profile.include->begin(), profile.include->end(), [&](const Selector& s) {
              return matches(s, c) &&
                     (c.abi != Abi::per_torch_py3 || !profile.from.empty() || names_abi(s));
            });
      } else if (c.abi == Abi::per_torch_py3 && profile.from.empty()) {
        keep = false;
      }
      keep = keep && std::none_of(profile.exclude.begin(), profile.exclude.end(),
                                  [&](const Selector& s) { return matches(s, c); });
      if (keep && !profile.platforms.empty()) {
        keep = std::any_of(profile.platforms.begin(), profile.platforms.end(),
                           [&](const auto& p) { return p.value == c.platform->name; });
      }
      if (keep) kept.push_back(c);
    }
    if (diagnostics && profile.include) {
      for (const Selector& rule : *profile.include) {
        if (std::none_of(base.begin(), base.end(),
                         [&](const auto& c) { return matches(rule, c); })) {
          diagnostics->push_back({"", rule.location, explain_empty_rule(profile, rule)});
        }
      }
    }
    for (const auto& axis : profile.latest) {
      kept = keep_latest(kept, axis.value);
    }
    return kept;
  }

  static std::vector<Combination> keep_latest(const std::vector<Combination>& in, Axis axis) {
    // Group by every other axis; keep the newest value of `axis` in each group.
    auto group_key = [axis](const Combination& c) {
      std::vector<std::string> key;
      for (Axis other : {Axis::platform, Axis::torch, Axis::cuda, Axis::python, Axis::abi}) {
        if (other != axis) key.push_back(axis_value(c, other));
      }
      return key;
    };
    auto newer = [axis](const Combination& a, const Combination& b) {
      switch (axis) {
        case Axis::torch:
          return a.torch->version > b.torch->version;
        case Axis::cuda:
          return a.cuda->version > b.cuda->version;
        case Axis::python:
          return a.python > b.python;
        case Axis::platform:
          return a.platform_index > b.platform_index;
        case Axis::abi:
          return a.abi > b.abi;
      }
      return false;
    };
    std::map<std::vector<std::string>, Combination> best;
    for (const Combination& c : in) {
      auto [it, inserted] = best.emplace(group_key(c), c);
      if (!inserted && newer(c, it->second)) it->second = c;
    }
    std::vector<Combination> out;
    for (const Combination& c : in) {
      if (same_combination(best.at(group_key(c)), c)) out.push_back(c);
    }
    return out;
  }

  // Why an include rule selects nothing: a torch release not published for the CUDA or Python
  // the rule asks for is the usual reason, and the message says which versions it was built for.
  std::string explain_empty_rule(const Profile& profile, const Selector& rule) const {
    const bool in_universe = std::any_of(universe_.begin(), universe_.end(),
                                         [&](const auto& c) { return matches(rule, c); });
    if (in_universe) {
      return fmt::format("this rule of profile '{}' matches none of the entries of {}",
                         profile.name,
                         profile.from.size() == 1 ? "'" + profile.from[0].value + "'"
                                                  : std::string("the profiles it builds on"));
    }
    auto patterns_of = [&](Axis axis) -> const Selector::Field* {
      for (const auto& f : rule.fields) {
        if (f.axis == axis) return &f;
      }
      return nullptr;
    };
    auto any_match = [](const Selector::Field* f, const std::string& value) {
      return !f || std::any_of(f->patterns.begin(), f->patterns.end(),
                               [&](const auto& p) { return glob::matches(p.value, value); });
    };
    std::vector<std::string> reasons;
    if (const Selector::Field* abi = patterns_of(Axis::abi); abi && any_match(abi, "stable")) {
      if (m_.stable_abi && patterns_of(Axis::python) && !any_match(patterns_of(Axis::python), "")) {
        reasons.push_back(
            "stable-ABI entries have no Python (one wheel serves every Python 3): drop the "
            "python field of this rule");
      }
      if (!m_.stable_abi) {
        reasons.push_back("matrix.yaml declares no stable_abi");
      } else {
        reasons.push_back(fmt::format(
            "stable-ABI entries are built against torch {} (stable_abi.target), for the CUDA "
            "versions of torch {} and later",
            m_.stable_abi->target.str(), m_.stable_abi->target.str()));
      }
    }
    for (const TorchRelease& torch : m_.torch) {
      if (!any_match(patterns_of(Axis::torch), torch.version.str())) continue;
      std::vector<std::string> cudas, pythons;
      for (const auto& c : torch.cuda)
        cudas.push_back(c.value.str());
      for (const auto& p : torch.python)
        pythons.push_back(p.value.str());
      const bool cuda_ok = std::any_of(cudas.begin(), cudas.end(), [&](const auto& v) {
        return any_match(patterns_of(Axis::cuda), v);
      });
      const bool python_ok = std::any_of(pythons.begin(), pythons.end(), [&](const auto& v) {
        return any_match(patterns_of(Axis::python), v);
      });
      if (!cuda_ok) {
        reasons.push_back(fmt::format("torch {} was released for CUDA {}", torch.version.str(),
                                      text::join(cudas, ", ")));
      } else if (!python_ok) {
        reasons.push_back(fmt::format("torch {} was released for Python {}", torch.version.str(),
                                      text::join(pythons, ", ")));
      }
    }
    std::string message =
        fmt::format("this rule of profile '{}' matches no valid combination", profile.name);
    if (!reasons.empty()) message += ": " + text::join(reasons, "; ");
    return message;
  }

  const Matrix& m_;
  std::vector<Combination> universe_;
  ProfileGraph graph_;
  std::unordered_map<std::size_t, std::vector<Combination>> memo_;  // by profile index
};

std::vector<std::string> known_values(const Matrix& m, Axis axis) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  auto add = [&](const std::string& v) {
    if (seen.insert(v).second) out.push_back(v);
  };
  switch (axis) {
    case Axis::torch:
      for (const auto& t : m.torch)
        add(t.version.str());
      break;
    case Axis::cuda:
      for (const auto& t : m.cuda)
        add(t.version.str());
      break;
    case Axis::python:
      for (const auto& t : m.torch) {
        for (const auto& p : t.python)
          add(p.value.str());
      }
      break;
    case Axis::platform:
      for (const auto& p : m.platforms)
        add(p.name);
      break;
    case Axis::abi:
      for (const Abi abi : {Abi::per_torch, Abi::per_torch_py3, Abi::stable})
        add(abi_name(abi));
      break;
  }
  return out;
}

// "2.8" for "2.8.0" is the likely slip in a version rule: suggest the release, and the glob that
// takes every release of that series. Otherwise fall back to spelling suggestions.
std::string suggest_value(const std::string& pattern, const std::vector<std::string>& known) {
  std::vector<std::string> series;
  for (const auto& v : known) {
    if (v.starts_with(pattern + ".")) series.push_back(v);
  }
  if (series.size() == 1) {
    return fmt::format(" (did you mean '{}', or '{}.*' for every {} release?)", series[0], pattern,
                       pattern);
  }
  if (!series.empty()) {
    return fmt::format(" (did you mean '{}.*'?)", pattern);
  }
  return text::did_you_mean(pattern, known);
}

void check_rule_patterns(const Matrix& m, const Selector& rule, Diagnostics& out) {
  for (const Selector::Field& field : rule.fields) {
    const std::vector<std::string> known = known_values(m, field.axis);
    for (const auto& pattern : field.patterns) {
      const bool any = std::any_of(known.begin(), known.end(),
                                   [&](const auto& v) { return glob::matches(pattern.value, v); });
      if (!any) {
        out.push_back({"", pattern.location,
                       fmt::format("no {} {} matches '{}'{}", axis_name(field.axis),
                                   field.axis == Axis::platform ? "platform"
                                   : field.axis == Axis::abi    ? "name"
                                                                : "version",
                                   pattern.value, suggest_value(pattern.value, known)),
                       "known: " + text::join(known, ", ")});
      }
    }
  }
}

Entry entry_of(const Matrix& m, const Combination& c, const Profile* profile,
               const std::string& package_version) {
  return make_entry(m,
                    {c.platform, c.torch->version, c.cuda->version, c.cuda->full_version, c.python,
                     c.abi, resolve_archs(m, *c.cuda, profile)},
                    package_version);
}

}  // namespace

Entry make_entry(const Matrix& m, const EntrySpec& spec, const std::string& package_version) {
  Entry e;
  e.id = render_id(m, spec.platform->name, spec.torch, spec.cuda, spec.python, spec.abi);
  e.platform = spec.platform->name;
  e.platform_tag = spec.platform->tag;
  e.os = spec.platform->os;
  e.runner = spec.platform->runner;
  e.docker_platform = spec.platform->docker_platform;
  e.torch = spec.torch;
  e.cuda = spec.cuda;
  e.cuda_full = spec.cuda_full;
  e.python = spec.python;
  e.abi = spec.abi;
  e.archs = spec.archs;
  e.fallback_platform_tag = spec.platform->fallback_tag;
  e.package = m.package.name;
  e.package_version = package_version;
  return e;
}

std::string Entry::arch_list() const {
  return text::join(archs, ";");
}

std::optional<std::string> check_entry_id_template(std::string_view id_template,
                                                   std::string_view key) {
  std::string sample;
  try {
    sample = fmt::vformat(id_template,
                          id_fields("linux", *Version::parse("2.8.0"), *Version::parse("12.9"),
                                    *Version::parse("3.12"), Abi::per_torch));
  } catch (const fmt::format_error& e) {
    return fmt::format(
        "{} is not a valid template ({}); it may use {{field}} with "
        "the fields {}",
        key, e.what(), kIdFieldList);
  }
  if (!is_valid_id(sample)) {
    return fmt::format(
        "{} gives ids like '{}'; ids may hold only letters, digits, "
        "'-' and '_' (use torch_major/torch_minor rather than torch)",
        key, sample);
  }
  return std::nullopt;
}

std::vector<std::string> resolve_archs(const Matrix& m, const CudaToolkit& toolkit,
                                       const Profile* profile) {
  std::vector<std::string> out;
  if (profile && profile->archs) {
    for (const auto& a : *profile->archs)
      out.push_back(a.value);
  } else if (toolkit.archs) {
    for (const auto& a : *toolkit.archs)
      out.push_back(a.value);
  } else {
    for (const auto& a : m.default_archs) {
      const ArchSpec* spec = m.find_arch(a.value);
      if (spec && spec->cuda.allows(toolkit.version)) out.push_back(a.value);
    }
  }
  return out;
}

Diagnostics validate_profiles(const Matrix& m) {
  Diagnostics out;
  CombinationSelector selector(m);
  struct Owner {
    Combination combination;
    std::string profile;
    std::vector<std::string> archs;
  };
  std::map<std::string, Owner> ids;
  // A profile is checked after the profiles it builds on; one whose base already has problems
  // is not checked further, since its own findings would only echo them.
  const ProfileGraph& graph = selector.graph();
  std::vector<bool> healthy(m.profiles.size(), false);
  // A bad id template is reported where it is declared: checked once here, not per entry.
  const bool templates_ok[] = {!check_entry_id_template(id_template(m, Abi::per_torch)),
                               !check_entry_id_template(id_template(m, Abi::stable))};
  // A combination's id is the same in every profile: rendered once.
  std::vector<std::string> ids_of(selector.universe().size());
  for (const std::size_t index : graph.bases_first()) {
    const Profile& profile = m.profiles[index];
    if (graph.find(profile.name) != index) continue;  // a second profile of one name: the loader's
    const std::size_t before = out.size();
    if (profile.include) {
      for (const Selector& rule : *profile.include)
        check_rule_patterns(m, rule, out);
    }
    for (const Selector& rule : profile.exclude)
      check_rule_patterns(m, rule, out);
    if (graph.on_cycle(index)) {
      out.push_back({"", profile.location,
                     fmt::format("profile '{}' builds on itself: {}", profile.name,
                                 text::join(graph.cycle_through(index), " -> "))});
      continue;
    }
    const bool bases_healthy = !graph.has_unknown_base(index) &&
                               std::all_of(graph.bases(index).begin(), graph.bases(index).end(),
                                           [&](std::size_t base) { return healthy[base]; });
    // Unknown platforms are reported by the loader; an empty selection would only echo them.
    const bool platforms_known =
        std::all_of(profile.platforms.begin(), profile.platforms.end(),
                    [&](const auto& p) { return m.find_platform(p.value) != nullptr; });
    if (out.size() != before || !bases_healthy || !platforms_known) continue;

    const std::vector<Combination> selected = selector.select(profile, &out);
    if (out.size() != before) continue;  // the rules' reasons are already reported
    if (selected.empty()) {
      out.push_back({"", profile.location,
                     fmt::format("profile '{}' selects no build entries", profile.name),
                     "check its include/exclude rules against the torch releases"});
      continue;
    }
    for (const Combination& c : selected) {
      if (profile.archs) {
        for (const auto& arch : *profile.archs) {
          const ArchSpec* spec = m.find_arch(arch.value);
          if (spec && !spec->cuda.allows(c.cuda->version)) {
            out.push_back(
                {"", arch.location,
                 fmt::format("profile '{}' builds with CUDA {}, which cannot target "
                             "architecture '{}': it needs CUDA {}",
                             profile.name, c.cuda->version.str(), arch.value, spec->cuda.str())});
          }
        }
      }
      if (!templates_ok[c.abi == Abi::stable]) continue;  // reported already
      std::string& id = ids_of[c.universe_index];
      if (id.empty()) id = render_id(m, c);
      const std::vector<std::string> archs = resolve_archs(m, *c.cuda, &profile);
      auto [it, inserted] = ids.emplace(id, Owner{c, profile.name, archs});
      if (!inserted && same_combination(it->second.combination, c) && it->second.archs != archs) {
        out.push_back({"", profile.archs ? profile.archs->front().location : profile.location,
                       fmt::format("entry '{}' is built for {} in profile '{}' but for {} in "
                                   "profile '{}'; an id must name one build",
                                   id, text::join(it->second.archs, ";"), it->second.profile,
                                   text::join(archs, ";"), profile.name),
                       "give both profiles the same archs, or tell the entries apart in "
                       "package.entry_id"});
        it->second = Owner{c, profile.name, archs};
      } else if (!inserted && !same_combination(it->second.combination, c)) {
        out.push_back({"",
                       c.abi == Abi::stable ? m.package.entry_id_stable_location
                                            : m.package.entry_id_location,
                       fmt::format("entry id '{}' names two different builds: {} (profile '{}') "
                                   "and {} (profile '{}')",
                                   id, describe(it->second.combination), it->second.profile,
                                   describe(c), profile.name),
                       "make package.entry_id tell them apart, e.g. add " +
                           distinguishing_fields(it->second.combination, c)});
        it->second = Owner{c, profile.name, archs};  // report each clash once
      }
    }
    healthy[index] = out.size() == before;
  }

  // In the order of the file, whatever order the profiles were checked in.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::pair(a.location.line, a.location.column) <
           std::pair(b.location.line, b.location.column);
  });
  // An arch problem or an id clash can repeat once per entry: keep the first of each.
  std::set<std::tuple<int, int, std::string>> seen;
  Diagnostics unique;
  for (auto& d : out) {
    if (seen.emplace(d.location.line, d.location.column, d.message).second) {
      unique.push_back(std::move(d));
    }
  }
  return unique;
}

namespace {

// The entries of one profile on the platform(s) `options` names; with `taken`, only those of
// combinations not taken yet (which it then marks).
std::vector<Entry> entries_of(const Matrix& m, CombinationSelector& selector,
                              const Profile& profile, const ExpandOptions& options,
                              std::vector<bool>* taken = nullptr) {
  const bool all = options.platform == "all";
  const bool is_os = options.platform == "linux" || options.platform == "windows";
  std::vector<Entry> entries;
  for (const Combination& c : selector.select(profile, nullptr)) {
    if (taken && (*taken)[c.universe_index]) continue;
    if (all || c.platform->name == options.platform ||
        (is_os && c.platform->os == options.platform)) {
      if (taken) (*taken)[c.universe_index] = true;
      entries.push_back(entry_of(m, c, &profile, options.package_version));
    }
  }
  return entries;
}

}  // namespace

std::vector<Entry> expand_all_profiles(const Matrix& m, const ExpandOptions& options) {
  CombinationSelector selector(m);
  // A combination in several profiles becomes one entry, the first profile's: each is made once.
  std::vector<bool> taken(selector.universe().size(), false);
  std::vector<Entry> out;
  std::unordered_set<std::string> ids;
  for (const Profile& profile : m.profiles) {
    for (Entry& e : entries_of(m, selector, profile, options, &taken)) {
      if (ids.insert(e.id).second) out.push_back(std::move(e));
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::vector<Entry>>> expand_each_profile(
    const Matrix& m, const ExpandOptions& options) {
  CombinationSelector selector(m);
  std::vector<std::pair<std::string, std::vector<Entry>>> out;
  for (const Profile& profile : m.profiles)
    out.emplace_back(profile.name, entries_of(m, selector, profile, options));
  return out;
}

Expected<std::vector<Entry>> expand_profile(const Matrix& m, std::string_view profile_name,
                                            const ExpandOptions& options) {
  const Profile* profile = m.find_profile(profile_name);
  if (!profile) {
    const std::vector<std::string> names = m.profile_names();
    return Error{fmt::format("unknown profile '{}'{}; profiles: {}", profile_name,
                             text::did_you_mean(profile_name, names), text::join(names, ", "))};
  }
  const bool all = options.platform == "all";
  const bool is_os = options.platform == "linux" || options.platform == "windows";
  if (!all && !is_os && !m.find_platform(options.platform)) {
    std::vector<std::string> choices = m.platform_names();
    for (const char* os : {"linux", "windows", "all"}) {
      if (std::find(choices.begin(), choices.end(), os) == choices.end()) choices.push_back(os);
    }
    return Error{fmt::format("unknown platform '{}'{}; choose one of: {}", options.platform,
                             text::did_you_mean(options.platform, choices),
                             text::join(choices, ", "))};
  }
  CombinationSelector selector(m);
  std::vector<Entry> entries = entries_of(m, selector, *profile, options);
  if (entries.empty()) {
    return Error{fmt::format("profile '{}' has no entries for platform '{}'", profile_name,
                             options.platform)};
  }
  return entries;
}

}  // namespace sagebuild::matrix
