#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "util/text.h"
#include "wheel/naming.h"
#include "wheel/verifier.h"

namespace sagebuild::wheel {

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
    const bool in_package = top == escaped || top == escaped + ".libs" ||
                            top == prefix + ".dist-info" || top == prefix + ".data" ||
                            (n.find('/') == std::string::npos && n.starts_with(escaped + "."));
    if (!in_package) {
      fail("A005", n,
           fmt::format("outside the package '{}', its .libs, {}.dist-info and "
                       "{}.data",
                       escaped, prefix, prefix));
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
  // wheel of one CPython, that release and every later one for a wheel of every Python (the
  // stable ABI's).
  const auto torch = *Version::parse(report_.torch);
  const std::string want =
      (for_every_python() ? torch_requirement_from(torch) : torch_requirement(torch))
          .substr(5);  // "==2.8.*" or ">=2.10"
  if (std::find(torch_requirements_.begin(), torch_requirements_.end(), want) ==
      torch_requirements_.end()) {
    fail("M003", "",
         torch_requirements_.empty()
             ? fmt::format("no Requires-Dist on torch; expected 'torch{}'", want)
             : fmt::format("Requires-Dist has torch '{}', expected 'torch{}'",
                           text::join(torch_requirements_, "', '"), want));
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
