#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "util/text.h"
#include "wheel/naming.h"
#include "wheel/verifier.h"

namespace sagebuild::wheel {
namespace {

// Why a name that is safe to extract is still refused: one file must have one spelling on every
// file system. Names outside printable ASCII can be equal after Unicode normalization (NFC and
// NFD of "é") or case folding ("Ä" and "ä"), or not be text at all; "./" and "//" segments name
// the same file as their canonical form; and PATH_MAX / NAME_MAX bound what can be created.
std::optional<std::string> unportable_name(const std::string& n) {
  for (const char c : n) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      return fmt::format(
          "byte 0x{:02x} in the name: entry names must be printable ASCII (others "
          "can collide after Unicode normalization or case folding, or not be "
          "text)",
          u);
    }
  }
  if (n.starts_with("./") || n.find("/./") != std::string::npos || n.ends_with("/.") ||
      n.find("//") != std::string::npos) {
    return std::string("'.' or empty path segments: the same file under another spelling");
  }
  if (n.size() > 4096) return fmt::format("{} characters, more than PATH_MAX (4096)", n.size());
  for (std::size_t at = 0; at < n.size();) {
    const std::size_t slash = std::min(n.find('/', at), n.size());
    if (slash - at > 255)
      return fmt::format("a path segment of {} characters (NAME_MAX is 255)", slash - at);
    at = slash + 1;
  }
  return std::nullopt;
}

// A module of one file at the top of site-packages, named after the package: name.py or an
// extension module (name.cpython-312-x86_64-linux-gnu.so, name.pyd).
bool is_single_file_module(const std::string& n, const std::string& escaped) {
  return n.find('/') == std::string::npos && n.starts_with(escaped + ".") &&
         (n.ends_with(".py") || n.ends_with(".so") || n.ends_with(".pyd"));
}

// The schemes of `{name}-{version}.data/` (the install paths of sysconfig that wheels may name).
// pip fails on any other.
// Deeper names are refused (A002) and left out of the per-folder checks: 5,000 names 2,000
// folders deep made those take seconds, and no package nests so far.
constexpr std::ptrdiff_t kMaxFolderDepth = 64;

constexpr std::string_view kDataSchemes[] = {"purelib", "platlib", "headers", "scripts", "data"};

}  // namespace

// A command the wheel may install (a script of .data/scripts or an entry point): one named after
// the project ("sageattention", "sageattention-bench"), so that it never replaces pip, python,
// torchrun or another distribution's tool in the environment's bin/.
bool is_own_command(std::string_view command, std::string_view escaped_project) {
  const std::string normalized = canonicalize_name(command);
  const std::string project = canonicalize_name(escaped_project);
  return !project.empty() && normalized.starts_with(project) &&
         (normalized.size() == project.size() || normalized[project.size()] == '-') &&
         command.find('/') == std::string_view::npos;
}

std::string foreign_command(std::string_view what) {
  return fmt::format(
      "{} would install into the environment's bin/ under a name that is not the project's (it "
      "could replace pip, python or another package's command)",
      what);
}

// Why an entry would install outside what the wheel owns, or nothing: its package (and its
// .libs), its .dist-info, commands named after it, and data files under share/<name>/.
std::optional<std::string> outside_install_scope(const std::string& n, const std::string& escaped,
                                                 const std::string& prefix) {
  const std::string top = n.substr(0, n.find('/'));
  std::string installed = n;  // the path relative to site-packages, for the top and (pur|plat)lib
  if (top == prefix + ".data" && n.size() > top.size() + 1) {
    const std::string rest = n.substr(top.size() + 1);
    const std::string scheme = rest.substr(0, rest.find('/'));
    if (std::find(std::begin(kDataSchemes), std::end(kDataSchemes), scheme) ==
        std::end(kDataSchemes)) {
      return fmt::format(
          "'{}' is not a .data scheme (purelib, platlib, headers, scripts, data): pip fails on it",
          scheme);
    }
    if (rest.size() == scheme.size() || rest.size() == scheme.size() + 1) return std::nullopt;
    const std::string inside = rest.substr(scheme.size() + 1);
    if (scheme == "scripts") {
      if (!is_own_command(inside, escaped)) {
        return foreign_command(fmt::format("the script '{}'", inside));
      }
      return std::nullopt;
    }
    if (scheme == "data") {
      // data installs relative to the environment's root: bin/python3 or lib/python3.X/site-
      // packages/torch/ are one path away.
      if (!inside.starts_with("share/" + escaped + "/")) {
        return fmt::format(
            "data files install relative to the environment's root; only share/{}/ is the "
            "project's",
            escaped);
      }
      return std::nullopt;
    }
    if (scheme == "headers") return std::nullopt;  // pip puts them under include/.../<project>/
    installed = inside;  // purelib, platlib: site-packages itself, the same rule as the top level
  }
  const std::string installed_top = installed.substr(0, installed.find('/'));
  if (installed.ends_with(".pth")) {
    return std::string(
        "a .pth file installs into site-packages, where Python runs its import lines at every "
        "start");
  }
  const bool own = installed_top == escaped || installed_top == escaped + ".libs" ||
                   is_single_file_module(installed, escaped) ||
                   (installed == n && (top == prefix + ".dist-info" || top == prefix + ".data"));
  if (!own) {
    return fmt::format("outside the package '{}', its .libs, {}.dist-info and {}.data", escaped,
                       prefix, prefix);
  }
  return std::nullopt;
}

// ---- N001: the file name ----
void Verifier::check_filename() {
  auto parsed = parse_wheel_filename(report_.file_name);
  if (!parsed) {
    fail("N001", "", parsed.error().message);
    return;
  }
  name_ = *parsed;
}

// ---- A002-A005: what the central directory says ----
void Verifier::check_entry_names(const ZipArchive& archive) {
  std::map<std::string, int> seen, folded;
  const std::string escaped = name_ ? escape_distribution_name(name_->name_part) : "";
  const std::string prefix = name_ ? escaped + "-" + name_->version_text : "";
  std::set<std::string> dist_info_dirs;
  for (const ZipEntry& e : archive.entries()) {
    const std::string& n = e.name;
    const bool absolute = n.starts_with('/') || (n.size() > 1 && n[1] == ':');
    const bool parent = n == ".." || n.starts_with("../") || n.find("/../") != std::string::npos ||
                        n.ends_with("/..");
    if (n.empty() || absolute || parent || n.find('\\') != std::string::npos ||
        n.find('\0') != std::string::npos) {
      fail("A002", n, "unsafe entry name");
    } else if (const auto why = unportable_name(n)) {
      fail("A002", n, *why);
    } else if (std::count(n.begin(), n.end(), '/') > kMaxFolderDepth) {
      fail("A002", n, fmt::format("more than {} folders deep", kMaxFolderDepth));
    }
    const std::uint32_t type = e.unix_mode() & 0170000;
    if (type != 0 && type != 0100000 && type != 0040000) {
      fail("A003", n,
           type == 0120000 ? "symbolic link" : fmt::format("special file (mode {:o})", type));
    }
    if (e.flags & 0x1) fail("A003", n, "encrypted entry");
    if (++seen[n] == 2) fail("A004", n, "the archive holds this name more than once");
    std::string lower = n;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (++folded[lower] == 2 && seen[n] == 1) {
      fail("A004", n,
           "differs from another entry only in letter case (clashes on Windows and macOS)");
    }
    const std::string top = n.substr(0, n.find('/'));
    if (top.ends_with(".dist-info")) dist_info_dirs.insert(top);
    if (!name_) continue;
    if (auto why = outside_install_scope(n, escaped, prefix)) fail("A005", n, *why);
  }
  // Where pip puts each file: .data/purelib and .data/platlib land in site-packages beside the
  // top level, so a copy there replaces the member that was checked (letter case folded, as on
  // Windows and macOS).
  if (name_) {
    std::map<std::string, std::string> installed;  // install path, folded -> entry
    for (const ZipEntry& e : archive.entries()) {
      if (e.is_directory()) continue;
      std::string target = "site-packages/" + e.name;
      if (e.name.starts_with(prefix + ".data/")) {
        const std::string rest = e.name.substr(prefix.size() + 6);
        const std::string scheme = rest.substr(0, rest.find('/'));
        if (scheme.size() == rest.size()) continue;
        const std::string inside = rest.substr(scheme.size() + 1);
        target =
            (scheme == "purelib" || scheme == "platlib" ? "site-packages" : scheme) + "/" + inside;
      }
      const auto [it, first] = installed.emplace(text::ascii_lower(target), e.name);
      // The same name, or one differing in case, is reported above.
      if (!first && text::ascii_lower(e.name) != text::ascii_lower(it->second)) {
        fail("A004", e.name,
             fmt::format("pip installs it to the same place as '{}', replacing the file that "
                         "was checked",
                         it->second));
      }
    }
  }
  // A name that is a file and also the directory of another entry cannot be extracted.
  std::set<std::string> files;
  for (const ZipEntry& e : archive.entries()) {
    if (!e.is_directory()) files.insert(e.name);
  }
  for (const ZipEntry& e : archive.entries()) {
    if (std::count(e.name.begin(), e.name.end(), '/') > kMaxFolderDepth) continue;  // A002
    for (std::size_t slash = e.name.find('/'); slash != std::string::npos;
         slash = e.name.find('/', slash + 1)) {
      if (files.contains(e.name.substr(0, slash))) {
        fail("A004", e.name,
             fmt::format("'{}' is a file in this archive, so it cannot also be a directory",
                         e.name.substr(0, slash)));
        break;
      }
    }
  }
  if (dist_info_dirs.size() > 1) {
    fail("A005", "",
         fmt::format(
             "more than one .dist-info directory: {}",
             text::join(std::vector<std::string>(dist_info_dirs.begin(), dist_info_dirs.end()),
                        ", ")));
  }
}

// ---- N002: decode the build tag against what is known, never by guessing digits ----
void Verifier::check_build_tag() {
  if (!name_) return;
  if (!name_->build) {
    fail("N002", "",
         "no build tag: the torch and CUDA the wheel was built for are not in its name");
    return;
  }
  const std::string& tag = name_->build->text;
  const std::size_t dot = tag.find('.');
  const std::string torch_digits = tag.substr(0, dot);
  const std::string cuda_digits = dot == std::string::npos ? "" : tag.substr(dot + 1);
  auto digits = [](const Version& v, std::size_t parts) {
    std::string s;
    for (std::size_t i = 0; i < parts; ++i)
      s += std::to_string(v.part(i));
    return s;
  };
  std::vector<std::string> torch_candidates, cuda_candidates;
  if (report_.provenance) {
    // Exact versions from inside the wheel; they must give these digits (P002 checks that too).
    auto t = Version::parse(report_.provenance->torch);
    auto c = Version::parse(report_.provenance->cuda);
    if (t && digits(*t, 3) == torch_digits) torch_candidates.push_back(t->str());
    if (c && digits(*c, 2) == cuda_digits) cuda_candidates.push_back(c->str());
  } else if (options_.known) {
    for (const Version& v : options_.known->torch) {
      if (digits(v, 3) == torch_digits) torch_candidates.push_back(v.str());
    }
    for (const Version& v : options_.known->cuda) {
      if (digits(v, 2) == cuda_digits) cuda_candidates.push_back(v.str());
    }
  } else {
    fail("N002", "",
         fmt::format("cannot decode build tag '{}': the wheel has no provenance and no "
                     "matrix.yaml was given (--matrix)",
                     tag));
    return;
  }
  if (torch_candidates.size() != 1 || cuda_candidates.size() != 1) {
    fail("N002", "",
         fmt::format(
             "build tag '{}' names torch {} and CUDA {}", tag,
             torch_candidates.empty() ? "(no known release)" : text::join(torch_candidates, " or "),
             cuda_candidates.empty() ? "(no known toolkit)" : text::join(cuda_candidates, " or ")));
    return;
  }
  report_.torch = torch_candidates[0];
  report_.cuda = cuda_candidates[0];
  // M003: the torch pin must be the one this build tag implies: the minor release for a
  // per-torch wheel (of one CPython, or of every Python: per-torch-py3), that release and every
  // later one for a stable-ABI wheel. Without provenance, a wheel of every Python is taken for
  // a stable-ABI one.
  const auto torch = *Version::parse(report_.torch);
  const bool stable = report_.provenance ? report_.provenance->abi == "stable" : for_every_python();
  const std::string want = (stable ? torch_requirement_from(torch) : torch_requirement(torch))
                               .substr(5);  // "==2.8.*" or ">=2.10"
  // Exactly one requirement on torch, unconditional, and the expected one: a second pin (or a
  // range beside it) would decide which torch installs, and a marker can make the pin vanish.
  if (torch_requirements_.size() != 1 || torch_requirements_[0] != want) {
    fail(
        "M003", "",
        torch_requirements_.empty()
            ? fmt::format("no Requires-Dist on torch; expected 'torch{}'", want)
        : torch_requirements_.size() > 1
            ? fmt::format("Requires-Dist names torch {} times ('{}'); expected only 'torch{}'",
                          torch_requirements_.size(), text::join(torch_requirements_, "', '"), want)
            : fmt::format("Requires-Dist has torch '{}', expected 'torch{}'",
                          torch_requirements_[0], want));
  }
}

// ---- N003: is this the wheel a matrix entry expects? ----
void Verifier::check_expected() {
  const ExpectedBuild* entry = nullptr;
  auto names_this = [&](const ExpectedBuild& e) {
    return e.wheel == report_.file_name ||
           (!e.fallback_wheel.empty() && e.fallback_wheel == report_.file_name);
  };
  for (const auto& e : options_.known_entries) {
    if (names_this(e)) entry = &e;
  }
  if (options_.expected) {
    entry = nullptr;
    for (const auto& e : *options_.expected) {
      if (names_this(e)) entry = &e;
    }
    if (!entry) {
      std::vector<std::string> names;
      for (const auto& e : *options_.expected)
        names.push_back(e.wheel);
      fail("N003", "",
           fmt::format("no expected entry builds this file; expected: {}",
                       names.size() <= 3 ? text::join(names, ", ")
                                         : fmt::format("{} wheels", names.size())));
    }
  }
  if (entry) expected_archs_ = entry->archs;
}

}  // namespace sagebuild::wheel
