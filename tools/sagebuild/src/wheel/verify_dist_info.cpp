#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "util/text.h"
#include "wheel/naming.h"
#include "wheel/requirement.h"
#include "wheel/verifier.h"

namespace sagebuild::wheel {

// ---- R, H, M and P checks: the .dist-info files ----
void Verifier::check_dist_info(const ZipArchive& archive) {
  if (!name_) return;  // without a valid name there is no dist-info directory to look for
  const std::string dir = name_->dist_info_dir();
  check_record(archive, dir + "RECORD");
  check_wheel_file(archive, dir + "WHEEL");
  check_metadata(archive, dir + "METADATA");
  check_entry_points(archive, dir + "entry_points.txt");
  const EntryReading* p = find(archive, dir + std::string(kProvenanceFile));
  if (!p || !p->text) {
    fail("P001", dir + std::string(kProvenanceFile),
         "missing: the wheel does not say how it was built");
  } else if (auto parsed = Provenance::parse(*p->text); !parsed) {
    fail("P001", dir + std::string(kProvenanceFile), parsed.error().message);
  } else {
    report_.provenance = *parsed;
    check_provenance(*parsed);
  }
}

// entry_points.txt (pip takes console and GUI scripts from it), read so that every reader sees
// the same entries (parse_entry_points); each command must be the project's own.
void Verifier::check_entry_points(const ZipArchive& archive, const std::string& path) {
  const EntryReading* r = find(archive, path);
  if (!r || r->error) return;  // optional; an unreadable entry is already an A check's finding
  if (!r->text) {
    fail("A005", path, "too large to be an entry point list");
    return;
  }
  auto entries = parse_entry_points(*r->text);
  if (!entries) {
    fail("A005", path, entries.error().message);
    return;
  }
  const std::string escaped = escape_distribution_name(name_->name_part);
  for (const EntryPoint& e : *entries) {
    if (e.group != "console_scripts" && e.group != "gui_scripts") continue;
    if (!is_own_command(e.name, escaped)) {
      fail("A005", path,
           fmt::format("line {}: {}", e.line,
                       foreign_command(fmt::format(
                           "the {} '{}'",
                           e.group == "gui_scripts" ? "GUI script" : "console script", e.name))));
    }
  }
}

void Verifier::check_record(const ZipArchive& archive, const std::string& record_path) {
  const EntryReading* record = find(archive, record_path);
  if (!record || !record->text) {
    fail("R001", record_path, record ? "unreadable" : "missing");
    return;
  }
  auto rows = parse_record(*record->text);
  if (!rows) {
    fail("R001", record_path, rows.error().message);
    return;
  }
  std::map<std::string, std::size_t> index;  // archive name -> entry index
  for (std::size_t i = 0; i < archive.entries().size(); ++i) {
    index.emplace(archive.entries()[i].name, i);
  }
  std::set<std::string> listed;
  for (const RecordRow& row : *rows) {
    if (!listed.insert(row.path).second) {
      fail("R006", row.path, fmt::format("listed again on RECORD line {}", row.line));
      continue;
    }
    if (row.path == record_path) {
      if (!row.hash.empty() || !row.size.empty()) {
        fail("R008", row.path, "RECORD's own row must have an empty hash and size");
      }
      continue;
    }
    auto it = index.find(row.path);
    if (it == index.end()) {
      fail("R005", row.path, "listed in RECORD but not in the archive");
      continue;
    }
    const EntryReading& r = results_[it->second];
    if (!row.hash.starts_with("sha256=")) {
      fail("R007", row.path,
           row.hash.empty() ? "no hash" : fmt::format("hash '{}' is not sha256", row.hash));
    } else {
      const std::string digest = row.hash.substr(7);
      const bool urlsafe =
          digest.size() == 43 &&
          digest.find_first_not_of(
              "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
              std::string::npos;
      if (!urlsafe) {
        fail("R007", row.path,
             "the digest is not 43 characters of URL-safe base64 without padding");
      } else if (!r.error && digest != r.digest) {
        fail("R002", row.path, fmt::format("sha256 is {}, RECORD says {}", r.digest, digest));
      }
    }
    if (row.size.empty() || row.size.find_first_not_of("0123456789") != std::string::npos) {
      fail("R007", row.path, fmt::format("size '{}' is not a decimal number", row.size));
    } else if (!r.error && row.size != std::to_string(r.size)) {
      fail("R003", row.path, fmt::format("size is {}, RECORD says {}", r.size, row.size));
    }
  }
  for (const ZipEntry& e : archive.entries()) {
    if (!e.is_directory() && !listed.count(e.name)) {
      fail("R004", e.name, "in the archive but not listed in RECORD");
    }
  }
}

void Verifier::check_wheel_file(const ZipArchive& archive, const std::string& path) {
  auto h = headers(archive, path, "H001");
  if (!h) return;
  check_single(*h, path, "H001", {"Wheel-Version", "Generator", "Root-Is-Purelib", "Build"});
  const auto version = h->first("Wheel-Version");
  // 1.0 exactly: PEP 427 lets installers go on with a warning for a later 1.x, whose meaning
  // this verifier cannot know, so a publisher's gate refuses it.
  if (!version || (*version != "1.0" && *version != "1")) {
    fail("H001", path, fmt::format("Wheel-Version is '{}', expected 1.0", version.value_or("")));
  }
  const bool platform_specific = std::any_of(name_->tags.begin(), name_->tags.end(),
                                             [](const Tag& t) { return t.platform != "any"; });
  const auto purelib = h->first("Root-Is-Purelib");
  if (platform_specific && (!purelib || *purelib != "false")) {
    fail("H002", path,
         fmt::format("Root-Is-Purelib is '{}' in a platform wheel", purelib.value_or("")));
  }
  std::vector<Tag> tags;
  for (const std::string& line : h->all("Tag")) {
    const auto parts = text::split(line, '-');
    if (parts.size() != 3) {
      fail("H003", path, fmt::format("'Tag: {}' is not interpreter-abi-platform", line));
      continue;
    }
    tags.push_back({parts[0], parts[1], parts[2]});
  }
  std::sort(tags.begin(), tags.end());
  if (tags != name_->tags) {
    std::vector<std::string> want, have;
    for (const Tag& t : name_->tags)
      want.push_back(t.str());
    for (const Tag& t : tags)
      have.push_back(t.str());
    fail("H003", path,
         fmt::format("Tag lines are [{}], the file name says [{}]", text::join(have, ", "),
                     text::join(want, ", ")));
  }
  const auto build = h->first("Build");
  const std::string expected = name_->build ? name_->build->text : "";
  if (build.value_or("") != expected) {
    fail("H004", path,
         fmt::format("Build is '{}', the file name's build tag is '{}'", build.value_or(""),
                     expected));
  }
}

namespace {

// Core metadata versions an installer and a registry both understand (packaging.metadata's list).
// A later one means fields this verifier cannot judge; registries refuse what they do not know.
constexpr std::string_view kMetadataVersions[] = {"1.0", "1.1", "1.2", "2.1", "2.2",
                                                  "2.3", "2.4", "2.5", "2.6"};

}  // namespace

// A field that may appear once: readers that take the first and readers that take the last
// would see different values, so a second copy is refused.
void Verifier::check_single(const Headers& h, const std::string& path, std::string_view id,
                            std::initializer_list<std::string_view> keys) {
  for (const std::string_view key : keys) {
    if (const std::size_t n = h.count(key); n > 1) {
      fail(id, path,
           fmt::format("'{}' appears {} times ('{}'); it may appear once", key, n,
                       text::join(h.all(key), "', '")));
    }
  }
}

void Verifier::check_metadata(const ZipArchive& archive, const std::string& path) {
  auto h = headers(archive, path, "M001");
  if (!h) return;
  check_single(*h, path, "M001", {"Metadata-Version", "Requires-Python", "Summary"});
  check_single(*h, path, "M002", {"Name", "Version"});
  const auto metadata_version = h->first("Metadata-Version");
  if (!metadata_version) {
    fail("M001", path, "no Metadata-Version");
  } else if (std::find(std::begin(kMetadataVersions), std::end(kMetadataVersions),
                       *metadata_version) == std::end(kMetadataVersions)) {
    fail("M001", path,
         fmt::format("Metadata-Version '{}' is not one of {}", *metadata_version,
                     text::join(std::vector<std::string>(std::begin(kMetadataVersions),
                                                         std::end(kMetadataVersions)),
                                ", ")));
  }
  report_.requires_dist = h->all("Requires-Dist");
  for (const std::string& requirement : report_.requires_dist) {
    if (auto why = requirement_error(requirement)) {
      fail("M001", path,
           fmt::format("Requires-Dist '{}' is not a requirement pip can read: {}", requirement,
                       *why));
    }
  }
  const auto name = h->first("Name");
  if (!name || canonicalize_name(*name) != name_->canonical_name) {
    fail("M002", path,
         fmt::format("Name is '{}', the file name says '{}'", name.value_or(""), name_->name_part));
  }
  const auto version = h->first("Version");
  const auto parsed = version ? parse_pep440(*version) : std::nullopt;
  if (!parsed || parsed->normalized != name_->version.normalized) {
    fail("M002", path,
         fmt::format("Version is '{}', the file name says '{}'", version.value_or(""),
                     name_->version_text));
  }
  for (const std::string& requirement : h->all("Requires-Dist")) {
    // "torch==2.8.*" or "torch (==2.8.*)" possibly with a marker after ';'
    const std::string spec(text::trim(requirement.substr(0, requirement.find(';'))));
    std::size_t end = 0;
    while (end < spec.size() && (std::isalnum(static_cast<unsigned char>(spec[end])) ||
                                 spec[end] == '-' || spec[end] == '_' || spec[end] == '.')) {
      ++end;
    }
    if (canonicalize_name(spec.substr(0, end)) != "torch") continue;
    std::string constraint(text::trim(spec.substr(end)));
    if (constraint.starts_with('(') && constraint.ends_with(')')) {
      constraint = std::string(text::trim(constraint.substr(1, constraint.size() - 2)));
    }
    // A marker (an extra, a Python version) makes the pin conditional: kept in the text, so that
    // it never equals the unconditional pin M003 expects.
    if (const auto semicolon = requirement.find(';'); semicolon != std::string::npos) {
      constraint += "; " + std::string(text::trim(requirement.substr(semicolon + 1)));
    }
    torch_requirements_.push_back(constraint);
  }
  if (const auto requires_python = h->first("Requires-Python")) {
    check_requires_python(path, *requires_python);
  }
}

// Requires-Python must admit the Python the cp tag names; each clause checked against X.Y.
void Verifier::check_requires_python(const std::string& path, const std::string& spec) {
  const std::optional<Version> python = Version::parse(cpython_version());
  if (!python) return;
  for (const std::string& raw : text::split(spec, ',')) {
    std::string clause(text::trim(raw));
    if (clause.ends_with(".*")) {
      // ==3.12.* admits 3.12; !=3.12.* excludes it
      const bool negated = clause.starts_with("!=");
      const auto prefix = Version::parse(text::trim(clause.substr(2, clause.size() - 4)));
      const bool match = prefix && prefix->major() == python->major() &&
                         (prefix->size() < 2 || prefix->minor() == python->minor());
      if (match == negated) {
        fail("M004", path,
             fmt::format("Requires-Python '{}' excludes Python {}", spec, python->str()));
      }
      continue;
    }
    // ~=X.Y admits X.Y and later minors of X: for a cp tag that is >=X.Y.
    auto constraint =
        VersionConstraint::parse(clause.starts_with("~=") ? ">=" + clause.substr(2) : clause);
    if (!constraint) {
      fail("M004", path, fmt::format("cannot read Requires-Python clause '{}'", clause));
    } else if (!constraint->allows(*python)) {
      fail("M004", path,
           fmt::format("Requires-Python '{}' excludes Python {}", spec, python->str()));
    }
  }
}

void Verifier::check_provenance(const Provenance& p) {
  const std::string where = std::string(kProvenanceFile);
  if (canonicalize_name(p.package) != name_->canonical_name) {
    fail("P002", where,
         fmt::format("package '{}' is not the wheel's '{}'", p.package, name_->name_part));
  }
  if (p.version != name_->version_text) {
    fail("P002", where,
         fmt::format("version {} is not the file name's {}", p.version, name_->version_text));
  }
  const auto torch = Version::parse(p.torch);
  const auto cuda = Version::parse(p.cuda);
  if (!torch || !cuda) {
    fail("P002", where, fmt::format("torch '{}' or CUDA '{}' is not a version", p.torch, p.cuda));
  } else if (name_->build && build_tag(*torch, *cuda) != name_->build->text) {
    fail("P002", where,
         fmt::format("torch {} + CUDA {} give build tag {}, the file name has {}", p.torch, p.cuda,
                     build_tag(*torch, *cuda), name_->build->text));
  }
  const std::string cp = "cp" + text::join(text::split(p.python, '.'), "");
  if (!for_every_python() && std::none_of(name_->tags.begin(), name_->tags.end(),
                                          [&](const Tag& t) { return t.interpreter == cp; })) {
    fail("P002", where,
         fmt::format("built for Python {}, the file name says {}", p.python, name_->tag_text));
  }
  if (std::none_of(name_->tags.begin(), name_->tags.end(),
                   [&](const Tag& t) { return t.platform == p.platform_tag; })) {
    fail("P002", where,
         fmt::format("built for platform {}, the file name says {}", p.platform_tag,
                     name_->tag_text));
  }
  if ((p.abi != "per-torch") != for_every_python()) {
    fail("P002", where,
         fmt::format("built on the {} ABI, but the file name's tags say {}", p.abi,
                     for_every_python() ? "every Python" : "one CPython"));
  }
}

}  // namespace sagebuild::wheel
