#include "matrix/loader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "matrix/expand.h"
#include "matrix/validator.h"
#include "matrix/yaml_reader.h"
#include "util/bounded_regex.h"
#include "util/text.h"

namespace sagebuild::matrix {
namespace {

const Strings kTopKeys = {"schema",     "package",    "architectures", "default_archs",
                          "cuda",       "torch",      "platforms",     "profiles",
                          "toolchains", "stable_abi", "docker"};
const Strings kTopRequired = {"package", "cuda", "torch", "platforms", "profiles"};
const Strings kPackageKeys = {"name",           "version",  "source_dir",      "build_command",
                              "build_requires", "entry_id", "entry_id_stable", "build_environment",
                              "kernels",        "binding",  "import_check"};
const Strings kNativePartKeys = {"sources", "exclude", "cmake",
                                 "handoff", "library", "user_settings"};
const Strings kVersionKeys = {"file", "regex", "tag_prefix", "untagged"};
const Strings kVersionRequired = {"file", "regex"};
const Strings kUntaggedNames = {"release", "dev", "dev-local"};
const Strings kCudaKeys = {"version", "archs", "pypi"};
const Strings kToolchainKeys = {"python", "cuda"};
const Strings kTorchKeys = {"cuda", "python"};
const Strings kPlatformKeys = {"tag", "fallback_tag", "os", "runner", "docker"};
const Strings kPlatformRequired = {"tag", "os"};
const Strings kProfileKeys = {"description", "from",   "include", "exclude",
                              "platforms",   "latest", "archs"};
const Strings kAxisNames = {"torch", "cuda", "python", "platform", "abi"};
// The axes `latest` keeps the newest value of (an ABI has no "newest").
const Strings kLatestAxisNames = {"torch", "cuda", "python", "platform"};
// torch's stable C ABI for extensions, as the binding uses it (TORCH_TARGET_VERSION, the
// versioned shim torch_library_impl / torch_call_dispatcher), starts with this release.
constexpr const char* kFirstStableAbiTorch = "2.10.0";
const Strings kOsNames = {"linux", "windows"};
const Strings kDockerKeys = {"default", "images"};
const Strings kDockerRuleKeys = {"cuda",          "base",   "toolkit",
                                 "toolkit_suite", "python", "system_python"};
const Strings kDockerToolkits = {"image", "pypi", "debian"};

// Names checked character by character: std::regex recurses per character in libstdc++, so a
// long value in a hostile file could overflow the stack.
bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}
bool all_of(std::string_view s, bool (*ok)(char)) {
  return std::all_of(s.begin(), s.end(), ok);
}
// PEP 508: letters and digits, with '.', '_' and '-' inside.
bool valid_package_name(std::string_view s) {
  return !s.empty() && alnum(s.front()) && alnum(s.back()) &&
         all_of(s, [](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}
// A CMake variable or environment variable name.
bool valid_variable_name(std::string_view s) {
  return !s.empty() && !digit(s.front()) && all_of(s, [](char c) { return alnum(c) || c == '_'; });
}
// "8.0", "9.0a", "10.0f".
bool valid_arch_name(std::string_view s) {
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) s.remove_suffix(1);
  const std::size_t dot = s.find('.');
  return dot != std::string_view::npos && dot > 0 && dot + 1 < s.size() &&
         all_of(s.substr(0, dot), digit) && all_of(s.substr(dot + 1), digit);
}
bool valid_platform_name(std::string_view s) {
  return !s.empty() && all_of(s, [](char c) { return (c >= 'a' && c <= 'z') || digit(c); });
}
bool valid_platform_tag(std::string_view s) {
  return !s.empty() &&
         all_of(s, [](char c) { return (c >= 'a' && c <= 'z') || digit(c) || c == '_'; });
}
bool valid_profile_name(std::string_view s) {
  return !s.empty() && alnum(s.front()) &&
         all_of(s, [](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

// A user's regular expression is compiled, and so checked, only up to this length.
constexpr std::size_t kMaxVersionRegex = 512;

std::optional<Axis> parse_axis(std::string_view name) {
  if (name == "torch") return Axis::torch;
  if (name == "cuda") return Axis::cuda;
  if (name == "python") return Axis::python;
  if (name == "platform") return Axis::platform;
  if (name == "abi") return Axis::abi;
  return std::nullopt;
}

class Loader {
 public:
  Loader(std::string file, Diagnostics& diagnostics) : r_(std::move(file), diagnostics) {}

  void read(const YAML::Node& root, Matrix& m) {
    if (root.IsNull() || !root.IsDefined()) {
      r_.error({}, "the file is empty; expected a mapping with the keys " +
                       text::join(kTopRequired, ", "));
      return;
    }
    auto top = r_.fields(root, "the top level", kTopKeys, kTopRequired);
    if (!top) return;
    if (const Field* f = top->get("schema")) read_schema(*f, m);
    if (const Field* f = top->get("package")) read_package(f->value, m.package);
    if (const Field* f = top->get("architectures")) read_architectures(f->value, m);
    if (const Field* f = top->get("default_archs")) {
      if (auto list = r_.scalars(f->value, "default_archs")) m.default_archs = *list;
    }
    if (const Field* f = top->get("cuda")) read_cuda(f->value, m);
    if (const Field* f = top->get("torch")) read_torch(f->value, m);
    if (const Field* f = top->get("platforms")) read_platforms(f->value, m);
    if (const Field* f = top->get("profiles")) read_profiles(f->value, m);
    if (const Field* f = top->get("toolchains")) read_toolchains(f->value, m);
    if (const Field* f = top->get("stable_abi")) read_stable_abi(f->value, m);
    if (const Field* f = top->get("docker")) read_docker(f->value, m);
  }

  YamlReader& reader() { return r_; }

 private:
  void read_schema(const Field& f, Matrix& m) {
    auto value = r_.scalar(f.value, "schema");
    if (!value) return;
    if (*value != "1") {
      r_.error(r_.where(f.value),
               fmt::format("unsupported schema '{}'; this sagebuild reads schema 1", *value));
      return;
    }
    m.schema = 1;
  }

  void read_package(const YAML::Node& node, PackageSpec& p) {
    auto f = r_.fields(node, "package", kPackageKeys, {"name", "version", "source_dir"});
    if (!f) return;
    if (const Field* x = f->get("name")) {
      if (auto v = r_.scalar(x->value, "package.name")) {
        if (!valid_package_name(*v)) {
          r_.error(r_.where(x->value),
                   fmt::format("'{}' is not a valid Python package name (PEP 508)", *v));
        }
        p.name = *v;
      }
    }
    if (const Field* x = f->get("version")) {
      p.version.location = r_.where(x->key_node);
      if (auto vf = r_.fields(x->value, "package.version", kVersionKeys, kVersionRequired)) {
        if (const Field* file = vf->get("file")) {
          p.version.file = r_.scalar(file->value, "package.version.file").value_or("");
          // A file of the project: relative to matrix.yaml's folder and inside it, so that a
          // matrix.yaml from elsewhere cannot have /etc/passwd or ~/.netrc read and quoted.
          const std::filesystem::path path(p.version.file);
          const bool outside =
              path.is_absolute() || path.has_root_name() || path.has_root_directory() ||
              std::any_of(path.begin(), path.end(), [](const auto& part) { return part == ".."; });
          if (outside) {
            r_.error(r_.where(file->value),
                     fmt::format("package.version.file '{}' is outside the project: give a path "
                                 "relative to matrix.yaml's folder, without '..'",
                                 p.version.file));
          }
        }
        if (const Field* re = vf->get("regex")) {
          if (auto v = r_.scalar(re->value, "package.version.regex")) {
            p.version.regex = *v;
            if (v->size() > kMaxVersionRegex) {
              r_.error(r_.where(re->value),
                       fmt::format("package.version.regex is {} characters long; at most {}",
                                   v->size(), kMaxVersionRegex));
            } else if (auto compiled = BoundedRegex::compile(*v); !compiled) {
              r_.error(r_.where(re->value),
                       fmt::format("invalid regular expression: {}", compiled.error().message));
            } else if (compiled->capture_groups() < 1) {
              r_.error(r_.where(re->value),
                       "package.version.regex needs a capture group around the version");
            }
          }
        }
        if (const Field* prefix = vf->get("tag_prefix")) {
          p.version.tag_prefix =
              r_.scalar(prefix->value, "package.version.tag_prefix").value_or("v");
        }
        if (const Field* u = vf->get("untagged")) {
          if (auto v = r_.scalar(u->value, "package.version.untagged")) {
            const auto at = std::find(kUntaggedNames.begin(), kUntaggedNames.end(), *v);
            if (at == kUntaggedNames.end()) {
              r_.error(r_.where(u->value),
                       fmt::format("unknown value '{}' for package.version.untagged{}; one of: {}",
                                   *v, text::did_you_mean(*v, kUntaggedNames),
                                   text::join(kUntaggedNames, ", ")));
            } else {
              p.version.untagged = static_cast<UntaggedVersion>(at - kUntaggedNames.begin());
            }
          }
        }
      }
    }
    if (const Field* x = f->get("source_dir")) {
      p.source_dir = r_.scalar(x->value, "package.source_dir").value_or("");
    }
    if (const Field* x = f->get("build_command")) {
      if (auto list = r_.scalars(x->value, "package.build_command")) {
        for (auto& item : *list)
          p.build_command.push_back(item.value);
      }
    }
    if (const Field* x = f->get("build_requires")) {
      if (auto list = r_.scalars(x->value, "package.build_requires")) {
        for (auto& item : *list)
          p.build_requires.push_back(item.value);
      }
    }
    if (const Field* x = f->get("build_environment")) {
      p.build_environment = read_settings(x->value, "package.build_environment");
    }
    if (const Field* x = f->get("import_check")) {
      p.import_check = r_.scalar(x->value, "package.import_check").value_or("");
    }
    if (const Field* x = f->get("kernels")) p.kernels = read_native_part(*x, "package.kernels");
    if (const Field* x = f->get("binding")) p.binding = read_native_part(*x, "package.binding");
    if (p.binding && !p.kernels) {
      r_.error(p.binding->location,
               "package.binding is linked against package.kernels, which is not declared");
    }
    p.entry_id_template =
        "{platform}-pytorch{torch_major}{torch_minor}-cu{cuda_major}{cuda_minor}"
        "-python{python_major}{python_minor}";
    if (const Field* x = f->get("entry_id")) {
      p.entry_id_location = r_.where(x->value);
      if (auto v = r_.scalar(x->value, "package.entry_id")) {
        if (auto problem = check_entry_id_template(*v, "package.entry_id")) {
          r_.error(r_.where(x->value), *problem);
        }
        p.entry_id_template = *v;
      }
    }
    p.entry_id_stable_template =
        "{platform}-stable-pytorch{torch_major}{torch_minor}-cu{cuda_major}{cuda_minor}";
    if (const Field* x = f->get("entry_id_stable")) {
      p.entry_id_stable_location = r_.where(x->value);
      if (auto v = r_.scalar(x->value, "package.entry_id_stable")) {
        if (auto problem = check_entry_id_template(*v, "package.entry_id_stable")) {
          r_.error(r_.where(x->value), *problem);
        }
        p.entry_id_stable_template = *v;
      }
    }
  }

  // NAME: value pairs (CMake settings, environment variables), in the file's order.
  std::vector<std::pair<std::string, std::string>> read_settings(const YAML::Node& node,
                                                                 const std::string& what) {
    std::vector<std::pair<std::string, std::string>> out;
    auto items = r_.named_items(node, what);
    if (!items) return out;
    for (const Field& item : items->items) {
      if (!valid_variable_name(item.key)) {
        r_.error(r_.where(item.key_node),
                 fmt::format("'{}' is not a variable name (letters, digits and '_')", item.key));
        continue;
      }
      if (auto v = r_.scalar(item.value, fmt::format("{}.{}", what, item.key))) {
        out.emplace_back(item.key, *v);
      }
    }
    return out;
  }

  NativePart read_native_part(const Field& field, const std::string& what) {
    NativePart part;
    part.location = r_.where(field.key_node);
    const bool binding = what.ends_with("binding");
    Strings required = {"sources", "handoff"};
    if (binding) required.push_back("library");
    auto f = r_.fields(field.value, what, kNativePartKeys, required);
    if (!f) return part;
    auto list = [&](const char* key) {
      std::vector<std::string> out;
      if (const Field* x = f->get(key)) {
        for (const auto& item :
             r_.scalars(x->value, what + "." + key).value_or(std::vector<Located<std::string>>{})) {
          if (item.value.empty() || item.value.starts_with('/') ||
              item.value.find("..") != std::string::npos) {
            r_.error(item.location, fmt::format("'{}' is not a path pattern inside the "
                                                "repository (relative, without '..')",
                                                item.value));
          }
          out.push_back(item.value);
        }
      }
      return out;
    };
    part.sources = list("sources");
    part.exclude = list("exclude");
    if (const Field* x = f->get("cmake")) part.cmake = read_settings(x->value, what + ".cmake");
    if (const Field* x = f->get("handoff")) {
      part.handoff = r_.scalar(x->value, what + ".handoff").value_or("");
    }
    if (const Field* x = f->get("library")) {
      if (!binding) {
        r_.error(r_.where(x->key_node), "only package.binding names a library");
      }
      part.library = r_.scalar(x->value, what + ".library").value_or("");
    }
    if (const Field* x = f->get("user_settings")) {
      part.user_settings = r_.scalar(x->value, what + ".user_settings").value_or("");
    }
    return part;
  }

  void read_stable_abi(const YAML::Node& node, Matrix& m) {
    auto f = r_.fields(node, "stable_abi", {"target", "extra_cuda"}, {"target"});
    if (!f) return;
    std::vector<Located<Version>> extra_cuda;
    if (const Field* e = f->get("extra_cuda")) {
      for (const auto& text : r_.scalars(e->value, "stable_abi.extra_cuda")
                                  .value_or(std::vector<Located<std::string>>{})) {
        if (auto v = r_.version(text.value, text.location, "CUDA version")) {
          extra_cuda.push_back({*v, text.location});
        }
      }
    }
    const Field* x = f->get("target");
    if (!x) return;
    auto text = r_.scalar(x->value, "stable_abi.target");
    if (!text) return;
    auto version = r_.version(*text, r_.where(x->value), "torch version");
    if (!version) return;
    if (version->size() != 3) {
      r_.error(r_.where(x->value),
               fmt::format("stable_abi.target names a torch release ('2.10.0'), not '{}'", *text));
      return;
    }
    if (*version < *Version::parse(kFirstStableAbiTorch)) {
      r_.error(r_.where(x->value),
               fmt::format("torch {} has no stable C ABI for extensions to target; it starts with "
                           "torch {} (TORCH_TARGET_VERSION)",
                           *text, kFirstStableAbiTorch),
               "entries of older torch releases are built per-torch");
      return;
    }
    m.stable_abi = StableAbi{*version, std::move(extra_cuda), r_.where(x->value)};
  }

  void read_docker(const YAML::Node& node, Matrix& m) {
    auto f = r_.fields(node, "docker", kDockerKeys, {"default", "images"});
    if (!f) return;
    DockerSettings docker;
    docker.location = f->location;
    if (const Field* x = f->get("images")) {
      if (auto sets = r_.named_items(x->value, "docker.images")) {
        for (const Field& set : sets->items) {
          docker.sets.push_back(read_docker_set(set));
        }
      }
    }
    if (const Field* x = f->get("default")) {
      docker.default_set = r_.scalar(x->value, "docker.default").value_or("");
      if (!docker.default_set.empty() && !docker.find_set(docker.default_set)) {
        std::vector<std::string> names;
        for (const auto& set : docker.sets)
          names.push_back(set.name);
        r_.error(r_.where(x->value),
                 fmt::format("docker.default names no set of docker.images: '{}'{}",
                             docker.default_set, text::did_you_mean(docker.default_set, names)));
      }
    }
    m.docker = std::move(docker);
  }

  DockerImageSet read_docker_set(const Field& set) {
    DockerImageSet out{set.key, {}, r_.where(set.key_node)};
    const std::string what = fmt::format("docker.images.{}", set.key);
    if (!set.value.IsSequence()) {
      r_.error(r_.where(set.value),
               fmt::format("{} must be a list of rules ({{cuda: \"13.*\", base: IMAGE, toolkit: "
                           "image|pypi|debian}}), found {}",
                           what, kind_name(set.value)));
      return out;
    }
    for (const YAML::Node& item : set.value) {
      auto f = r_.fields(item, "a rule of " + what, kDockerRuleKeys, {"cuda", "base", "toolkit"});
      if (!f) continue;
      DockerImageRule rule;
      rule.location = f->location;
      if (const Field* x = f->get("cuda")) {
        rule.cuda = {r_.scalar(x->value, what + " cuda").value_or(""), r_.where(x->value)};
      }
      if (const Field* x = f->get("base")) {
        rule.base = r_.scalar(x->value, what + " base").value_or("");
      }
      if (const Field* x = f->get("toolkit")) {
        const std::string name = r_.scalar(x->value, what + " toolkit").value_or("");
        const auto at = std::find(kDockerToolkits.begin(), kDockerToolkits.end(), name);
        if (at == kDockerToolkits.end()) {
          r_.error(r_.where(x->value),
                   fmt::format("unknown toolkit source '{}'{}", name,
                               text::did_you_mean(name, kDockerToolkits)),
                   "image: the base image has it; pypi: provisioned from the toolkit's pypi "
                   "requirement; debian: Debian's nvidia-cuda-toolkit");
        } else {
          rule.toolkit = static_cast<DockerToolkit>(at - kDockerToolkits.begin());
        }
      }
      if (const Field* x = f->get("toolkit_suite")) {
        rule.toolkit_suite = r_.scalar(x->value, what + " toolkit_suite").value_or("");
        const bool word = !rule.toolkit_suite.empty() &&
                          std::all_of(rule.toolkit_suite.begin(), rule.toolkit_suite.end(),
                                      [](char c) { return c >= 'a' && c <= 'z'; });
        if (rule.toolkit != DockerToolkit::debian) {
          r_.error(r_.where(x->value), "toolkit_suite applies only to toolkit: debian",
                   "the Debian suite whose nvidia-cuda-toolkit is unpacked onto the base");
        } else if (!word) {
          r_.error(r_.where(x->value),
                   fmt::format("toolkit_suite must be a Debian suite's code name (trixie), "
                               "found '{}'",
                               rule.toolkit_suite));
        }
      }
      if (const Field* x = f->get("python")) {
        rule.python = r_.scalar(x->value, what + " python").value_or("");
      }
      if (const Field* x = f->get("system_python")) {
        if (auto text = r_.scalar(x->value, what + " system_python")) {
          rule.system_python = r_.version(*text, r_.where(x->value), "Python version");
        }
      }
      if (rule.python.empty() && !rule.system_python) {
        r_.error(rule.location,
                 fmt::format("a rule of {} names no Python: give python (uv, or an image holding "
                             "interpreters) or system_python (the base image's python3)",
                             what));
      }
      out.rules.push_back(std::move(rule));
    }
    return out;
  }

  void read_architectures(const YAML::Node& node, Matrix& m) {
    auto items = r_.named_items(node, "architectures");
    if (!items) return;
    for (const Field& item : items->items) {
      if (!valid_arch_name(item.key)) {
        r_.error(
            r_.where(item.key_node),
            fmt::format("'{}' is not an architecture name like '8.0', '9.0a' or '12.0'", item.key));
        continue;
      }
      auto text =
          r_.scalar(item.value, fmt::format("the CUDA constraint of architecture '{}'", item.key));
      if (!text) continue;
      auto constraint = VersionConstraint::parse(*text);
      if (!constraint) {
        r_.error(r_.where(item.value),
                 fmt::format("'{}' is not a CUDA version constraint like '>=12.8' or "
                             "'>=9.0, <13.0'",
                             *text));
        continue;
      }
      m.architectures.push_back({item.key, *constraint, r_.where(item.key_node)});
    }
  }

  void read_cuda(const YAML::Node& node, Matrix& m) {
    auto items = r_.named_items(node, "cuda");
    if (!items) return;
    for (const Field& item : items->items) {
      auto version = r_.version(item.key, r_.where(item.key_node), "CUDA version");
      if (!version) continue;
      if (version->size() != 2) {
        r_.error(
            r_.where(item.key_node),
            fmt::format("CUDA toolkits are named by major.minor ('12.9'), not '{}'", item.key));
        continue;
      }
      CudaToolkit toolkit{*version, item.key, std::nullopt, "", r_.where(item.key_node)};
      auto f = r_.fields(item.value, fmt::format("cuda '{}'", item.key), kCudaKeys, {"version"});
      if (!f) continue;
      if (const Field* x = f->get("version")) {
        if (auto full = r_.scalar(x->value, "the full CUDA version")) {
          auto parsed = r_.version(*full, r_.where(x->value), "CUDA version");
          if (parsed &&
              (parsed->major() != version->major() || parsed->minor() != version->minor())) {
            r_.error(r_.where(x->value),
                     fmt::format("CUDA {} cannot have the full version '{}'", item.key, *full));
          }
          toolkit.full_version = *full;
        }
      }
      if (const Field* x = f->get("archs")) {
        toolkit.archs = r_.scalars(x->value, fmt::format("cuda '{}' archs", item.key));
      }
      if (const Field* x = f->get("pypi")) {
        toolkit.pypi = r_.scalar(x->value, fmt::format("cuda '{}' pypi", item.key)).value_or("");
      }
      m.cuda.push_back(std::move(toolkit));
    }
  }

  void read_toolchains(const YAML::Node& node, Matrix& m) {
    auto f = r_.fields(node, "toolchains", kToolchainKeys, {});
    if (!f) return;
    for (const std::string kind : {"python", "cuda"}) {
      const Field* x = f->get(kind);
      if (!x) continue;
      auto items = r_.named_items(x->value, "toolchains." + kind);
      if (!items) continue;
      for (const Field& item : items->items) {
        auto version = r_.version(item.key, r_.where(item.key_node), kind + " version");
        if (!version) continue;
        if (version->size() != 2) {
          r_.error(r_.where(item.key_node),
                   fmt::format("toolchains.{} is keyed by major.minor ('{}.{}'), not '{}'", kind,
                               version->major(), version->minor(), item.key));
          continue;
        }
        auto path = r_.scalar(item.value, fmt::format("the path of {} {}", kind, item.key));
        if (!path) continue;
        auto& list = kind == "python" ? m.toolchains.python : m.toolchains.cuda;
        list.push_back({*version, {*path, r_.where(item.value)}});
      }
    }
  }

  void read_torch(const YAML::Node& node, Matrix& m) {
    auto items = r_.named_items(node, "torch");
    if (!items) return;
    for (const Field& item : items->items) {
      auto version = r_.version(item.key, r_.where(item.key_node), "torch version");
      if (!version) continue;
      if (version->size() != 3) {
        r_.error(r_.where(item.key_node),
                 fmt::format("torch releases are named by major.minor.patch ('2.8.0'), not '{}'",
                             item.key));
        continue;
      }
      TorchRelease release{*version, {}, {}, r_.where(item.key_node)};
      auto f = r_.fields(item.value, fmt::format("torch '{}'", item.key), kTorchKeys, kTorchKeys);
      if (!f) continue;
      if (const Field* x = f->get("cuda")) {
        if (auto list = r_.scalars(x->value, "cuda")) {
          for (const auto& v : *list) {
            if (auto parsed = r_.version(v.value, v.location, "CUDA version")) {
              release.cuda.push_back({*parsed, v.location});
            }
          }
        }
      }
      if (const Field* x = f->get("python")) {
        if (auto list = r_.scalars(x->value, "python")) {
          for (const auto& v : *list) {
            auto parsed = r_.version(v.value, v.location, "Python version");
            if (parsed && parsed->size() != 2) {
              r_.error(v.location,
                       fmt::format("Python versions are major.minor ('3.12'), not '{}'", v.value));
              continue;
            }
            if (parsed) release.python.push_back({*parsed, v.location});
          }
        }
      }
      m.torch.push_back(std::move(release));
    }
  }

  void read_platforms(const YAML::Node& node, Matrix& m) {
    auto items = r_.named_items(node, "platforms");
    if (!items) return;
    for (const Field& item : items->items) {
      if (!valid_platform_name(item.key)) {
        r_.error(
            r_.where(item.key_node),
            fmt::format("platform names are lower-case letters and digits, not '{}'", item.key));
        continue;
      }
      Platform platform{item.key, "", "", "", "", "", r_.where(item.key_node)};
      auto f = r_.fields(item.value, fmt::format("platform '{}'", item.key), kPlatformKeys,
                         kPlatformRequired);
      if (!f) continue;
      if (const Field* x = f->get("tag")) {
        platform.tag = r_.scalar(x->value, "the platform tag").value_or("");
        if (!platform.tag.empty() && !valid_platform_tag(platform.tag)) {
          r_.error(
              r_.where(x->value),
              fmt::format("'{}' is not a PEP 425 platform tag like 'linux_x86_64'", platform.tag));
        }
      }
      if (const Field* x = f->get("fallback_tag")) {
        platform.fallback_tag = r_.scalar(x->value, "the fallback platform tag").value_or("");
        if (!platform.fallback_tag.empty() && !valid_platform_tag(platform.fallback_tag)) {
          r_.error(r_.where(x->value),
                   fmt::format("'{}' is not a PEP 425 platform tag like 'linux_x86_64'",
                               platform.fallback_tag));
        } else if (!platform.tag.starts_with("manylinux")) {
          r_.error(r_.where(x->key_node),
                   fmt::format("fallback_tag is for a manylinux tag that a wheel may miss; "
                               "'{}' is not one",
                               platform.tag));
        }
      }
      if (const Field* x = f->get("os")) {
        platform.os = r_.scalar(x->value, "os").value_or("");
        if (!platform.os.empty() &&
            std::find(kOsNames.begin(), kOsNames.end(), platform.os) == kOsNames.end()) {
          r_.error_keep_going(
              r_.where(x->value),
              fmt::format("unknown os '{}'{}; sagebuild builds on: {}", platform.os,
                          text::did_you_mean(platform.os, kOsNames), text::join(kOsNames, ", ")));
        }
      }
      if (const Field* x = f->get("runner")) {
        platform.runner = r_.scalar(x->value, "runner").value_or("");
      }
      if (const Field* x = f->get("docker")) {
        platform.docker_platform = r_.scalar(x->value, "docker").value_or("");
      }
      m.platforms.push_back(std::move(platform));
    }
  }

  void read_selectors(const YAML::Node& node, std::string_view what, std::vector<Selector>& out) {
    if (!node.IsSequence()) {
      r_.error(r_.where(node), fmt::format("{} must be a list of rules like "
                                           "{{torch: \"2.8.*\", python: \"3.12\"}}, found {}",
                                           what, kind_name(node)));
      return;
    }
    for (const YAML::Node& rule : node) {
      auto f = r_.fields(rule, fmt::format("a rule of {}", what), kAxisNames);
      if (!f) continue;
      Selector selector;
      selector.location = f->location;
      for (const Field& field : f->items) {
        if (auto patterns = r_.scalars(field.value, field.key)) {
          selector.fields.push_back({*parse_axis(field.key), *patterns});
        }
      }
      if (f->items.empty()) {
        r_.error(f->location, fmt::format("an empty rule in {} would match everything", what));
        continue;
      }
      out.push_back(std::move(selector));
    }
  }

  void read_profiles(const YAML::Node& node, Matrix& m) {
    auto items = r_.named_items(node, "profiles");
    if (!items) return;
    for (const Field& item : items->items) {
      Profile profile;
      profile.name = item.key;
      profile.location = r_.where(item.key_node);
      if (!valid_profile_name(item.key)) {
        r_.error(
            profile.location,
            fmt::format("profile names are letters, digits, '.', '_' and '-', not '{}'", item.key));
        continue;
      }
      const std::string what = fmt::format("profile '{}'", item.key);
      auto f = r_.fields(item.value, what, kProfileKeys);
      if (!f) continue;
      if (const Field* x = f->get("description")) {
        profile.description = r_.scalar(x->value, "description").value_or("");
      }
      if (const Field* x = f->get("from")) {
        profile.from = r_.scalars(x->value, "from").value_or(profile.from);
      }
      if (const Field* x = f->get("include")) {
        profile.include.emplace();
        read_selectors(x->value, what + " include", *profile.include);
      }
      if (const Field* x = f->get("exclude")) {
        read_selectors(x->value, what + " exclude", profile.exclude);
      }
      if (const Field* x = f->get("platforms")) {
        profile.platforms = r_.scalars(x->value, "platforms").value_or(profile.platforms);
      }
      if (const Field* x = f->get("latest")) {
        for (const auto& name :
             r_.scalars(x->value, "latest").value_or(std::vector<Located<std::string>>{})) {
          auto axis = parse_axis(name.value);
          if (!axis || *axis == Axis::abi) {
            r_.error_keep_going(name.location,
                                fmt::format("unknown axis '{}'{}; latest takes: {}", name.value,
                                            text::did_you_mean(name.value, kLatestAxisNames),
                                            text::join(kLatestAxisNames, ", ")));
            continue;
          }
          profile.latest.push_back(Located<Axis>{*axis, name.location});
        }
      }
      if (const Field* x = f->get("archs")) {
        profile.archs = r_.scalars(x->value, what + " archs");
      }
      m.profiles.push_back(std::move(profile));
    }
  }

  YamlReader r_;
};

}  // namespace

LoadResult load_matrix(std::string_view text, std::string_view file_name) {
  LoadResult result;
  Loader loader(std::string(file_name), result.diagnostics);
  Matrix matrix;
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    loader.read(root, matrix);
  } catch (const YAML::Exception& e) {
    const SourceLocation location =
        e.mark.is_null() ? SourceLocation{} : SourceLocation{e.mark.line + 1, e.mark.column + 1};
    result.diagnostics.push_back({std::string(file_name), location, "YAML syntax error: " + e.msg});
    return result;
  } catch (const std::exception& e) {
    result.diagnostics.push_back(
        {std::string(file_name), {}, std::string("cannot read: ") + e.what()});
    return result;
  }
  if (loader.reader().model_complete()) {
    check_cross_references(matrix, loader.reader());
  }
  if (result.diagnostics.empty()) {
    result.matrix = std::move(matrix);
  }
  return result;
}

}  // namespace sagebuild::matrix
