#include "matrix/validator.h"

#include <map>
#include <string>

#include <fmt/format.h>

#include "matrix/expand.h"
#include "matrix/profile_graph.h"
#include "util/text.h"

namespace sagebuild::matrix {
namespace {

class Validator {
 public:
  Validator(const Matrix& m, YamlReader& r) : m_(m), r_(r) {}

  void run() {
    check_archs();
    check_torch();
    check_stable_abi();
    check_platforms();
    check_profiles();
  }

 private:
  Strings known_arch_names() const {
    Strings names;
    for (const ArchSpec& a : m_.architectures)
      names.push_back(a.name);
    return names;
  }

  // Reports an arch that is unknown or that `cuda` cannot target. `context` says who asked.
  void check_arch(const Located<std::string>& arch, const Version* cuda, std::string_view context) {
    const ArchSpec* spec = m_.find_arch(arch.value);
    if (!spec) {
      const std::string base = arch.value.substr(0, arch.value.find('+'));
      r_.error(arch.location,
               fmt::format("unknown architecture '{}'{}", arch.value,
                           text::did_you_mean(base, known_arch_names())),
               "architectures are declared under 'architectures:'; append '+PTX' to also embed "
               "PTX");
      return;
    }
    if (cuda && !spec->cuda.allows(*cuda)) {
      r_.error(arch.location, fmt::format("{} cannot target architecture '{}': it needs CUDA {}",
                                          context, arch.value, spec->cuda.str()));
    }
  }

  void check_archs() {
    for (const auto& arch : m_.default_archs)
      check_arch(arch, nullptr, "");
    for (const CudaToolkit& toolkit : m_.cuda) {
      const std::string context = fmt::format("CUDA {}", toolkit.version.str());
      if (toolkit.archs) {
        for (const auto& arch : *toolkit.archs)
          check_arch(arch, &toolkit.version, context);
        if (toolkit.archs->empty()) {
          r_.error(toolkit.location, fmt::format("{} has an empty arch list", context));
        }
      } else if (!m_.default_archs.empty() && resolve_archs(m_, toolkit, nullptr).empty()) {
        r_.error(
            toolkit.location,
            fmt::format("{} can target none of default_archs; give it an 'archs' list", context));
      }
    }
    if (m_.default_archs.empty()) {
      for (const CudaToolkit& toolkit : m_.cuda) {
        if (!toolkit.archs) {
          r_.error(toolkit.location,
                   fmt::format("CUDA {} has no 'archs' and there are no default_archs",
                               toolkit.version.str()));
        }
      }
    }
  }

  void check_torch() {
    Strings cuda_names;
    for (const CudaToolkit& t : m_.cuda)
      cuda_names.push_back(t.version.str());
    std::map<std::string, const TorchRelease*> by_digits;
    for (const TorchRelease& release : m_.torch) {
      for (const auto& cuda : release.cuda) {
        if (!m_.find_cuda(cuda.value)) {
          r_.error(cuda.location,
                   fmt::format("torch {} names CUDA {}, which is not declared under 'cuda:'{}",
                               release.version.str(), cuda.value.str(),
                               text::did_you_mean(cuda.value.str(), cuda_names)));
        }
      }
      if (release.cuda.empty()) {
        r_.error(release.location,
                 fmt::format("torch {} lists no CUDA versions", release.version.str()));
      }
      if (release.python.empty()) {
        r_.error(release.location,
                 fmt::format("torch {} lists no Python versions", release.version.str()));
      }
      // Build tags carry the digits of the torch version without separators (PRODUCT.md): two
      // releases with the same digits would give wheels that cannot be told apart by name.
      const std::string digits = fmt::format("{}{}{}", release.version.major(),
                                             release.version.minor(), release.version.patch());
      auto [it, inserted] = by_digits.emplace(digits, &release);
      if (!inserted) {
        r_.error(release.location,
                 fmt::format("torch {} and {} share the build-tag digits '{}': their wheels could "
                             "not be told apart by name",
                             it->second->version.str(), release.version.str(), digits));
      }
    }
  }

  void check_stable_abi() {
    if (!m_.stable_abi) return;
    for (const auto& cuda : m_.stable_abi->extra_cuda) {
      if (m_.find_cuda(cuda.value)) continue;
      r_.error(cuda.location,
               fmt::format("stable_abi.extra_cuda names CUDA {}, which is not under 'cuda:'",
                           cuda.value.str()));
    }
    if (m_.find_torch(m_.stable_abi->target)) return;
    std::vector<std::string> releases;
    for (const TorchRelease& t : m_.torch)
      releases.push_back(t.version.str());
    r_.error(m_.stable_abi->location,
             fmt::format("stable_abi.target {} is not a torch release under 'torch:'{}",
                         m_.stable_abi->target.str(),
                         text::did_you_mean(m_.stable_abi->target.str(), releases)),
             "the stable-ABI binding is built in an environment with that torch");
  }

  void check_platforms() {
    for (const Platform& p : m_.platforms) {
      if (p.os == "windows" && !p.docker_platform.empty()) {
        r_.error(p.location, fmt::format("platform '{}' is a Windows platform and cannot be "
                                         "built with Docker Bake; remove 'docker'",
                                         p.name));
      }
    }
  }

  void check_profiles() {
    const Strings profile_names = m_.profile_names();
    const Strings platform_names = m_.platform_names();
    const ProfileGraph graph(m_);  // name lookups in constant time: thousands of profiles
    for (const Profile& profile : m_.profiles) {
      for (const auto& base : profile.from) {
        if (graph.find(base.value) == ProfileGraph::npos) {
          r_.error(base.location,
                   fmt::format("profile '{}' builds on unknown profile '{}'{}", profile.name,
                               base.value, text::did_you_mean(base.value, profile_names)));
        }
      }
      for (const auto& platform : profile.platforms) {
        if (!m_.find_platform(platform.value)) {
          r_.error(platform.location,
                   fmt::format("unknown platform '{}'{}", platform.value,
                               text::did_you_mean(platform.value, platform_names)));
        }
      }
      if (profile.archs) {
        for (const auto& arch : *profile.archs)
          check_arch(arch, nullptr, "");
      }
    }
    // Selection problems (unknown versions in rules, cycles, empty profiles, duplicate ids)
    // are found by expanding each profile, which reports them with their locations.
    for (const auto& d : validate_profiles(m_)) {
      r_.error(d.location, d.message, d.note);
    }
  }

  const Matrix& m_;
  YamlReader& r_;
};

}  // namespace

void check_cross_references(const Matrix& m, YamlReader& reader) {
  Validator(m, reader).run();
}

}  // namespace sagebuild::matrix
