#include "wheel/verify.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "util/glob.h"
#include "util/sha256.h"
#include "util/text.h"
#include "wheel/dist_info.h"
#include "wheel/elf.h"
#include "wheel/filename.h"
#include "wheel/linux_policy.h"
#include "wheel/naming.h"
#include "wheel/pe.h"

namespace sagebuild::wheel {
namespace {

// clang-format off
constexpr CheckInfo kChecks[] = {
  {"N001", "filename", "the file name follows PEP 427 (as packaging.utils.parse_wheel_filename reads it)",
   "rename the file to {name}-{version}[-{build}]-{python}-{abi}-{platform}.whl"},
  {"N002", "build-tag", "the build tag decodes to exactly one known torch release and CUDA toolkit",
   "name the wheel with its entry's build tag ({torch digits}.{cuda digits}, e.g. 280.129)"},
  {"N003", "expected-entry", "the wheel is the one a matrix entry expects (--expect-entry/--expect-profile)",
   "build the entry with `sagebuild build --entry ID`, or check the profile"},
  {"A001", "zip-structure", "the archive's records are consistent and readable",
   "rebuild the wheel; the archive is damaged"},
  {"A002", "unsafe-path", "no absolute paths, '..', backslashes or drive letters in entry names",
   "rebuild the wheel from a clean tree; never write such names"},
  {"A003", "special-entry", "no symlinks, devices, FIFOs or encrypted entries",
   "replace links by the files they point to"},
  {"A004", "duplicate-entry", "no name occurs twice (also not differing only in case)",
   "rebuild the wheel; each file must be written once"},
  {"A005", "outside-package", "every entry is in the package, its .libs, .dist-info or .data",
   "move stray files into the package or drop them from the wheel"},
  {"A006", "crc", "every entry's CRC-32 matches its data", "rebuild the wheel; the archive is corrupt"},
  {"A007", "size-bounds", "declared and actual sizes agree and stay within limits (zip bombs)",
   "rebuild the wheel; never publish an archive that inflates beyond its declared sizes"},
  {"R001", "record-present", "RECORD exists and parses", "regenerate RECORD (sagebuild build does it)"},
  {"R002", "record-hash", "every RECORD hash matches the file", "regenerate RECORD after changing files"},
  {"R003", "record-size", "every RECORD size matches the file", "regenerate RECORD after changing files"},
  {"R004", "record-unlisted", "every file in the archive is listed in RECORD", "regenerate RECORD"},
  {"R005", "record-missing-file", "every file RECORD lists is in the archive", "regenerate RECORD"},
  {"R006", "record-duplicate", "no file is listed twice in RECORD", "regenerate RECORD"},
  {"R007", "record-hash-format", "hashes are sha256=<urlsafe base64 without padding>, sizes decimal",
   "regenerate RECORD with sha256"},
  {"R008", "record-self-row", "RECORD's own row has no hash and no size", "regenerate RECORD"},
  {"H001", "wheel-file", "WHEEL exists, parses, and says Wheel-Version 1.x", "regenerate the WHEEL file"},
  {"H002", "root-is-purelib", "Root-Is-Purelib is false for a platform wheel",
   "set Root-Is-Purelib: false (the build backend does this for binary wheels)"},
  {"H003", "wheel-tags", "the Tag lines equal the file name's expanded tags",
   "make the file name and the WHEEL Tag lines agree (rename or rebuild)"},
  {"H004", "wheel-build", "the Build line equals the file name's build tag",
   "write 'Build: <tag>' into WHEEL when renaming (sagebuild build does it)"},
  {"M001", "metadata-file", "METADATA exists and parses", "rebuild the wheel"},
  {"M002", "name-version", "METADATA Name and Version equal the file name's",
   "rename the file or fix the version's one source"},
  {"M003", "torch-pin", "Requires-Dist pins torch to the release the build tag names (torch==X.Y.*)",
   "pin torch at build time (sagebuild build writes the pin)"},
  {"M004", "requires-python", "Requires-Python admits the Python of the cp tag",
   "widen requires-python in pyproject.toml or build for a Python it admits"},
  {"B001", "binary-format", "each compiled module is an ELF/PE for the platform's machine and Python",
   "build on (or for) the platform the wheel is tagged for"},
  {"B002", "needed-libraries", "each binary needs only libraries of the platform's allow-list or the wheel",
   "link the dependency statically, or vendor it into the wheel"},
  {"B003", "symbol-versions", "the binaries' symbol versions (GLIBC, GLIBCXX, CXXABI, GCC) fit the manylinux tag",
   "build on an older distribution (the manylinux_2_28 builder), link the newer parts statically, or raise the tag"},
  {"B004", "cuda-archs", "the binaries contain SASS for every listed architecture (PTX where asked)",
   "build with the entry's TORCH_CUDA_ARCH_LIST"},
  {"B005", "no-libpython", "a wheel for every Python (py3-none, abi3) needs no libpython and no CPython API symbols",
   "build the binding without Python headers (torch.ops.load_library loads it), or tag the wheel for one CPython"},
  {"P001", "provenance", "the wheel records how it was built (dist-info/sagebuild.json)",
   "build the wheel with sagebuild build"},
  {"P002", "provenance-consistent", "the recorded provenance agrees with the name and metadata",
   "rebuild; the wheel was renamed or edited after it was built"},
  {"I001", "import", "the wheel installs into a fresh venv with its torch and imports (--import-test)",
   "read the import error; usually a missing library or a torch ABI mismatch"},
};
// clang-format on

// Libraries a Linux CUDA extension may need from outside the wheel: the C/C++ runtime that
// every manylinux system has, the CUDA driver and runtime, and torch's own libraries (which the
// torch wheel the pin names provides).
constexpr std::string_view kLinuxAllowedLibraries[] = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "librt.so.1",
    "libpthread.so.0",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "libatomic.so.1",
    "libcuda.so.1",
    "libcudart.so.*",
    "libc10.so",
    "libc10_cuda.so",
    "libtorch.so",
    "libtorch_cpu.so",
    "libtorch_cuda.so",
    "libtorch_python.so",
    "libshm.so",
};

// The Windows counterpart: the system and C runtime DLLs every Windows has (or the VC++
// redistributable that Python itself needs), the CUDA driver and runtime, torch's DLLs, and the
// Python DLL an extension module may import. Compared case-insensitively.
constexpr std::string_view kWindowsAllowedLibraries[] = {
    "kernel32.dll",
    "advapi32.dll",
    "user32.dll",
    "ucrtbase.dll",
    "api-ms-win-crt-*.dll",
    "api-ms-win-core-*.dll",
    "vcruntime140.dll",
    "vcruntime140_1.dll",
    "msvcp140.dll",
    "msvcp140_1.dll",
    "msvcp140_2.dll",
    "vcomp140.dll",
    "nvcuda.dll",
    "cudart64_*.dll",
    "c10.dll",
    "c10_cuda.dll",
    "torch.dll",
    "torch_cpu.dll",
    "torch_cuda.dll",
    "torch_python.dll",
    "shm.dll",
    "python3*.dll",
};

constexpr std::uint16_t kMachineX86_64 = 62;
constexpr std::uint16_t kMachineAarch64 = 183;

struct EntryResult {
  std::optional<ZipError> error;
  std::string digest;  // urlsafe base64 sha256
  std::uint64_t size = 0;
  std::optional<std::string> text;  // kept for .dist-info files
  bool binary = false;              // looked like a compiled module
  std::optional<Expected<ElfInfo>> elf;
  std::optional<Expected<PeInfo>> pe;
};

class Verifier {
 public:
  Verifier(const std::filesystem::path& path, const VerifyOptions& options, WheelReport& report)
      : path_(path), options_(options), report_(report) {}

  void run() {
    for (const CheckInfo& check : check_catalog()) {
      if (is_selected(check.id, options_)) report_.checks_run.emplace_back(check.id);
    }
    check_filename();
    auto archive = ZipArchive::open(path_, options_.limits);
    if (!archive) {
      fail("A001", "", archive.error().message);
      return;
    }
    report_.entries = archive->entries().size();
    check_entry_names(*archive);
    read_entries(*archive);
    check_dist_info(*archive);
    check_build_tag();
    check_expected();
    check_binaries(*archive);
    check_import();
  }

 private:
  void fail(std::string_view id, std::string where, std::string message) {
    if (!is_selected(id, options_)) return;
    report_.findings.push_back({std::string(id), std::move(where), std::move(message)});
  }

  // ---- N001: the file name ----
  void check_filename() {
    auto parsed = parse_wheel_filename(report_.file_name);
    if (!parsed) {
      fail("N001", "", parsed.error().message);
      return;
    }
    name_ = *parsed;
  }

  // ---- A002-A005: what the central directory says ----
  void check_entry_names(const ZipArchive& archive) {
    std::map<std::string, int> seen, folded;
    const std::string escaped = name_ ? escape_distribution_name(name_->name_part) : "";
    const std::string prefix = name_ ? escaped + "-" + name_->version_text : "";
    std::set<std::string> dist_info_dirs;
    for (const ZipEntry& e : archive.entries()) {
      const std::string& n = e.name;
      const bool absolute = n.starts_with('/') || (n.size() > 1 && n[1] == ':');
      const bool parent = n == ".." || n.starts_with("../") ||
                          n.find("/../") != std::string::npos || n.ends_with("/..");
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

  // ---- read every entry once, in parallel: CRC, sizes, hash, and binaries parsed in place ----
  void read_entries(const ZipArchive& archive) {
    const auto& entries = archive.entries();
    results_.resize(entries.size());
    std::atomic<std::size_t> next{0};
    std::atomic<std::uint64_t> inflated{0};
    auto worker = [&] {
      std::ifstream stream = archive.open_stream();
      std::vector<std::uint8_t> data, scratch;
      for (std::size_t i = next++; i < entries.size(); i = next++) {
        const ZipEntry& e = entries[i];
        EntryResult& r = results_[i];
        if (e.is_directory()) continue;
        r.error = archive.read(stream, e, data, scratch);
        if (r.error) continue;
        inflated += data.size();
        r.size = data.size();
        r.digest = base64url_nopad(sha256(data));
        const std::string top = e.name.substr(0, e.name.find('/'));
        if (top.ends_with(".dist-info") && data.size() < (16u << 20)) {
          r.text = std::string(data.begin(), data.end());
        }
        if (is_binary_name(e.name)) {
          r.binary = true;
          if (looks_like_pe(data)) {
            r.pe = read_pe(data);
          } else {
            r.elf = read_elf(data);
          }
        }
      }
    };
    unsigned threads = options_.threads ? options_.threads : std::thread::hardware_concurrency();
    threads = std::clamp<unsigned>(threads, 1, 16);
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
      pool.emplace_back(worker);
    worker();
    for (auto& t : pool)
      t.join();
    report_.inflated = inflated;

    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& error = results_[i].error;
      if (!error) continue;
      const char* id = error->kind == ZipErrorKind::crc           ? "A006"
                       : error->kind == ZipErrorKind::size_bounds ? "A007"
                       : error->kind == ZipErrorKind::unsupported ? "A003"
                                                                  : "A001";
      fail(id, entries[i].name, error->message);
    }
  }

  const EntryResult* find(const ZipArchive& archive, const std::string& name) const {
    for (std::size_t i = 0; i < archive.entries().size(); ++i) {
      if (archive.entries()[i].name == name) return &results_[i];
    }
    return nullptr;
  }

  std::optional<Headers> headers(const ZipArchive& archive, const std::string& file,
                                 std::string_view id) {
    const EntryResult* r = find(archive, file);
    if (!r || r->error) {
      fail(id, file, r ? "unreadable" : "missing");
      return std::nullopt;
    }
    if (!r->text) {
      fail(id, file, "too large to be a metadata file");
      return std::nullopt;
    }
    auto parsed = Headers::parse(*r->text);
    if (!parsed) {
      fail(id, file, parsed.error().message);
      return std::nullopt;
    }
    return *parsed;
  }

  // ---- R, H, M and P checks: the .dist-info files ----
  void check_dist_info(const ZipArchive& archive) {
    if (!name_) return;  // without a valid name there is no dist-info directory to look for
    const std::string dir =
        escape_distribution_name(name_->name_part) + "-" + name_->version_text + ".dist-info/";
    check_record(archive, dir + "RECORD");
    check_wheel_file(archive, dir + "WHEEL");
    check_metadata(archive, dir + "METADATA");
    const EntryResult* p = find(archive, dir + std::string(kProvenanceFile));
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

  void check_record(const ZipArchive& archive, const std::string& record_path) {
    const EntryResult* record = find(archive, record_path);
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
      const EntryResult& r = results_[it->second];
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

  void check_wheel_file(const ZipArchive& archive, const std::string& path) {
    auto h = headers(archive, path, "H001");
    if (!h) return;
    const auto version = h->first("Wheel-Version");
    if (!version || !(version->starts_with("1.") || *version == "1")) {
      fail("H001", path, fmt::format("Wheel-Version is '{}', expected 1.x", version.value_or("")));
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

  void check_metadata(const ZipArchive& archive, const std::string& path) {
    auto h = headers(archive, path, "M001");
    if (!h) return;
    if (!h->first("Metadata-Version")) fail("M001", path, "no Metadata-Version");
    const auto name = h->first("Name");
    if (!name || canonicalize_name(*name) != name_->canonical_name) {
      fail("M002", path,
           fmt::format("Name is '{}', the file name says '{}'", name.value_or(""),
                       name_->name_part));
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
      torch_requirements_.push_back(constraint);
    }
    if (const auto requires_python = h->first("Requires-Python")) {
      check_requires_python(path, *requires_python);
    }
  }

  // Requires-Python must admit the Python the cp tag names; each clause checked against X.Y.
  void check_requires_python(const std::string& path, const std::string& spec) {
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

  void check_provenance(const Provenance& p) {
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
           fmt::format("torch {} + CUDA {} give build tag {}, the file name has {}", p.torch,
                       p.cuda, build_tag(*torch, *cuda), name_->build->text));
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
    if ((p.abi == "stable") != for_every_python()) {
      fail("P002", where,
           fmt::format("built on the {} ABI, but the file name's tags say {}", p.abi,
                       for_every_python() ? "every Python" : "one CPython"));
    }
  }

  // ---- N002: decode the build tag against what is known, never by guessing digits ----
  void check_build_tag() {
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
           fmt::format("build tag '{}' names torch {} and CUDA {}", tag,
                       torch_candidates.empty() ? "(no known release)"
                                                : text::join(torch_candidates, " or "),
                       cuda_candidates.empty() ? "(no known toolkit)"
                                               : text::join(cuda_candidates, " or ")));
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
  void check_expected() {
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

  // ---- B001-B004: the compiled modules ----
  // Without a valid file name the platform is unknown: the binaries are still read (their
  // architectures and glibc needs are reported) but not judged against a platform.
  void check_binaries(const ZipArchive& archive) {
    std::string platform;
    if (name_) {
      for (const Tag& t : name_->tags)
        platform = t.platform;
    }
    const bool windows = platform.starts_with("win");
    const bool any = platform == "any";
    const std::uint16_t machine = platform.ends_with("aarch64") ? kMachineAarch64 : kMachineX86_64;
    std::set<std::string> in_wheel;
    for (const ZipEntry& e : archive.entries())
      in_wheel.insert(e.name.substr(e.name.rfind('/') + 1));
    const LinuxPolicy* policy = policy_for_tag(platform);
    std::vector<std::string> wheel_libraries(in_wheel.begin(), in_wheel.end());
    std::vector<const ElfInfo*> elves;
    std::set<std::string> sass, ptx;
    int binaries = 0;
    Version newest_glibc = *Version::parse("0");
    for (std::size_t i = 0; i < archive.entries().size(); ++i) {
      const EntryResult& r = results_[i];
      const std::string& path = archive.entries()[i].name;
      if (!r.binary || r.error) continue;
      ++binaries;
      auto collect = [&](const std::vector<FatbinImage>& images) {
        for (const FatbinImage& image : images) {
          (image.kind == FatbinImage::Kind::sass ? sass : ptx).insert(image.name());
        }
      };
      if (!name_) {
        if (r.elf && *r.elf) collect(r.elf->value().fatbin);
        if (r.pe && *r.pe) collect(r.pe->value().fatbin);
        continue;
      }
      check_extension_suffix(path);
      if (r.pe) {
        if (!*r.pe) {
          fail("B001", path, r.pe->error().message);
          continue;
        }
        const PeInfo& pe = r.pe->value();
        if (!windows) {
          fail("B001", path, "a Windows PE binary in a wheel for " + platform);
        } else if (pe.machine != 0x8664) {
          fail("B001", path, fmt::format("PE machine {:#x}, not AMD64", pe.machine));
        }
        for (const std::string& dll : pe.imports) {
          const std::string lower = text::ascii_lower(dll);
          const bool allowed =
              std::any_of(in_wheel.begin(), in_wheel.end(),
                          [&](const std::string& f) { return text::ascii_lower(f) == lower; }) ||
              std::any_of(std::begin(kWindowsAllowedLibraries), std::end(kWindowsAllowedLibraries),
                          [&](std::string_view p) { return glob::matches(p, lower); });
          if (!allowed) {
            fail("B002", path,
                 fmt::format("imports {}, which is neither allowed nor in the wheel", dll));
          }
        }
        collect(pe.fatbin);
        continue;
      }
      if (!r.elf || !*r.elf) {
        fail("B001", path, r.elf ? r.elf->error().message : "not a binary");
        continue;
      }
      const ElfInfo& elf = r.elf->value();
      if (windows)
        fail("B001", path, "an ELF binary in a Windows wheel");
      else if (elf.machine != machine)
        fail("B001", path, fmt::format("ELF machine {} does not match {}", elf.machine, platform));
      elves.push_back(&elf);
      if (policy) {
        for (const PolicyViolation& v : policy_violations(elf, *policy, wheel_libraries))
          fail(v.kind == PolicyViolation::Kind::library ? "B002" : "B003", path, v.message);
      } else {
        for (const std::string& library : elf.needed) {
          const bool allowed =
              in_wheel.count(library) ||
              std::any_of(std::begin(kLinuxAllowedLibraries), std::end(kLinuxAllowedLibraries),
                          [&](std::string_view p) { return glob::matches(p, library); });
          if (!allowed)
            fail("B002", path,
                 fmt::format("needs {}, which is neither allowed nor in the wheel", library));
        }
      }
      for (const auto& [library, version] : elf.version_needs) {
        if (!version.starts_with("GLIBC_")) continue;
        if (const auto v = Version::parse(version.substr(6)); v && *v > newest_glibc)
          newest_glibc = *v;
      }
      if (for_every_python()) check_no_libpython(path, elf);
      for (const FatbinImage& image : elf.fatbin) {
        (image.kind == FatbinImage::Kind::sass ? sass : ptx).insert(image.name());
      }
    }
    if (newest_glibc.major() > 0) report_.min_glibc = newest_glibc.str();
    if (!elves.empty() && !windows) {
      report_.manylinux = symbol_policy(elves).value_or("");
      report_.external_libraries = external_libraries(elves, wheel_libraries);
    }
    report_.sass.assign(sass.begin(), sass.end());
    report_.ptx.assign(ptx.begin(), ptx.end());
    if (!name_) return;
    if (!any && binaries == 0) fail("B001", "", "a platform wheel without any compiled module");

    std::vector<std::string> archs = expected_archs_;
    if (archs.empty() && report_.provenance) archs = report_.provenance->archs;
    if (archs.empty()) {
      if (!any)
        fail("B004", "",
             "no list of architectures to check: no provenance and no matrix entry builds this "
             "file");
      return;
    }
    for (const std::string& arch : archs) {
      const auto number = arch_number(arch);
      if (!number) {
        fail("B004", "", fmt::format("cannot read architecture '{}'", arch));
        continue;
      }
      const std::string want = fmt::format("sm_{}{}", number->first, number->second);
      if (!sass.count(want)) {
        fail("B004", "",
             fmt::format("no SASS for {} (listed as '{}'); the binaries hold {}", want, arch,
                         sass.empty() ? "no SASS at all" : text::join(report_.sass, ", ")));
      }
      if (arch.ends_with("+PTX") &&
          !ptx.count(fmt::format("compute_{}{}", number->first, number->second))) {
        fail("B004", "",
             fmt::format("no PTX for compute_{}{} (listed as '{}')", number->first, number->second,
                         arch));
      }
    }
  }

  // A wheel whose tags take every Python 3 (py3-none, cp3X-abi3): its binaries must not need
  // one Python's library or API.
  bool for_every_python() const {
    return name_ && std::all_of(name_->tags.begin(), name_->tags.end(), [](const Tag& t) {
             return t.abi == "abi3" || (t.abi == "none" && t.interpreter.starts_with("py"));
           });
  }

  // ---- B005: no libpython, no CPython API ----
  void check_no_libpython(const std::string& path, const ElfInfo& elf) {
    for (const std::string& library : elf.needed) {
      if (library.starts_with("libpython")) {
        fail("B005", path, fmt::format("needs {}: it works with that one Python only", library));
      }
    }
    if (name_ && std::any_of(name_->tags.begin(), name_->tags.end(),
                             [](const Tag& t) { return t.abi == "abi3"; })) {
      return;  // the limited API's symbols are what abi3 binaries may use
    }
    std::vector<std::string> api;
    for (const SymbolNeed& need : elf.undefined) {
      if (need.symbol.starts_with("Py") || need.symbol.starts_with("_Py"))
        api.push_back(need.symbol);
    }
    if (!api.empty()) {
      fail("B005", path,
           fmt::format("uses the CPython API ({}{}) but is tagged for every Python", api.front(),
                       api.size() > 1 ? fmt::format(" and {} more", api.size() - 1) : ""));
    }
  }

  // "3.12" from a cp312 tag of the file name, or "" when it names no CPython.
  std::string cpython_version() const {
    for (const Tag& t : name_->tags) {
      if (t.interpreter.starts_with("cp") && t.interpreter.size() >= 4) {
        return t.interpreter.substr(2, 1) + "." + t.interpreter.substr(3);
      }
    }
    return "";
  }

  // I001 did not run: it leaves checks_run for skipped, with the reason.
  void skip_import(const std::string& why) {
    std::erase(report_.checks_run, "I001");
    report_.skipped.emplace_back("I001", why);
    report_.import_test = "skipped: " + why;
  }

  // ---- I001: install and import, only for wheels that passed everything else ----
  void check_import() {
    if (!is_selected("I001", options_)) return;
    if (!options_.import_tester) return skip_import("not asked for (--import-test)");
    if (!name_) return skip_import("the file name does not parse");
    if (!report_.findings.empty()) return skip_import("the wheel failed other checks");
    ImportRequest request;
    request.python = cpython_version();
    if (!report_.torch.empty()) {
      const Version torch = *Version::parse(report_.torch);
      request.torch_requirement =
          for_every_python() ? torch_requirement_from(torch) : torch_requirement(torch);
    } else if (torch_requirements_.size() == 1) {
      request.torch_requirement = "torch" + torch_requirements_[0];  // no build tag: METADATA's pin
    }
    request.module = escape_distribution_name(name_->name_part);
    if (request.python.empty() && !for_every_python()) {
      return skip_import("the wheel names no CPython version");
    }
    const ImportOutcome outcome = options_.import_tester(path_, request);
    switch (outcome.status) {
      case ImportOutcome::Status::passed:
        report_.import_test = "passed: " + outcome.detail;
        break;
      case ImportOutcome::Status::skipped:
        skip_import(outcome.detail);
        break;
      case ImportOutcome::Status::failed:
        report_.import_test = "failed: " + outcome.detail;
        fail("I001", "", outcome.detail);
        break;
    }
  }

  // A CPython extension named for one interpreter ("*.cpython-312-*.so") must match the cp tag.
  void check_extension_suffix(const std::string& path) {
    const std::size_t at = path.find(".cpython-");
    if (at == std::string::npos) return;
    const std::string version = path.substr(at + 9, path.find('-', at + 9) - at - 9);
    const bool match = std::any_of(name_->tags.begin(), name_->tags.end(),
                                   [&](const Tag& t) { return t.interpreter == "cp" + version; });
    if (!match)
      fail("B001", path,
           fmt::format("built for CPython {}, the wheel is tagged {}", version, name_->tag_text));
  }

  const std::filesystem::path& path_;
  const VerifyOptions& options_;
  WheelReport& report_;
  std::optional<WheelFilename> name_;
  std::vector<EntryResult> results_;
  std::vector<std::string> torch_requirements_;
  std::vector<std::string> expected_archs_;
};

}  // namespace

std::span<const CheckInfo> check_catalog() {
  return kChecks;
}

const CheckInfo* find_check(std::string_view key) {
  for (const CheckInfo& c : kChecks) {
    if (c.id == key || c.name == key) return &c;
  }
  return nullptr;
}

bool is_selected(std::string_view id, const VerifyOptions& options) {
  const CheckInfo* check = find_check(id);
  auto matches = [&](const std::string& key) {
    return id.starts_with(key) || (check && check->name == key);
  };
  if (!options.select.empty() &&
      std::none_of(options.select.begin(), options.select.end(), matches)) {
    return false;
  }
  return std::none_of(options.ignore.begin(), options.ignore.end(), matches);
}

WheelReport verify_wheel(const std::filesystem::path& path, const VerifyOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  WheelReport report;
  report.path = path.string();
  report.file_name = path.filename().string();
  std::error_code ec;
  report.file_size = std::filesystem::file_size(path, ec);
  Verifier(path, options, report).run();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

nlohmann::ordered_json skipped_json(const WheelReport& r) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [id, reason] : r.skipped) {
    const CheckInfo* check = find_check(id);
    out.push_back({{"check", id}, {"name", check ? check->name : ""}, {"reason", reason}});
  }
  return out;
}

nlohmann::ordered_json report_to_json(const WheelReport& r) {
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const Finding& f : r.findings) {
    const CheckInfo* check = find_check(f.check);
    findings.push_back({{"check", f.check},
                        {"name", check ? check->name : ""},
                        {"where", f.where},
                        {"message", f.message},
                        {"fix", check ? check->fix : ""}});
  }
  nlohmann::ordered_json doc = {{"wheel", r.file_name},
                                {"path", r.path},
                                {"ok", r.ok()},
                                {"checks", r.checks_run},
                                {"skipped", skipped_json(r)},
                                {"findings", findings},
                                {"torch", r.torch},
                                {"cuda", r.cuda},
                                {"sass", r.sass},
                                {"ptx", r.ptx},
                                {"min_glibc", r.min_glibc},
                                {"manylinux", r.manylinux},
                                {"external_libraries", r.external_libraries},
                                {"import_test", r.import_test},
                                {"entries", r.entries},
                                {"size", r.file_size},
                                {"inflated", r.inflated},
                                {"seconds", r.seconds}};
  doc["provenance"] =
      r.provenance ? nlohmann::ordered_json(r.provenance->to_json()) : nlohmann::ordered_json();
  return doc;
}

std::string format_report(const WheelReport& r) {
  std::string out;
  const double mb = static_cast<double>(r.file_size) / 1e6;
  const std::string skipped =
      r.skipped.empty() ? "" : fmt::format(", {} skipped", r.skipped.size());
  if (r.ok()) {
    out += fmt::format("ok    {} ({} check{} passed{}, {} entries, {:.1f} MB in {:.2f} s)\n",
                       r.file_name, r.checks_run.size(), r.checks_run.size() == 1 ? "" : "s",
                       skipped, r.entries, mb, r.seconds);
  } else {
    out += fmt::format("FAIL  {} ({} problem{} in {} checks{})\n", r.file_name, r.findings.size(),
                       r.findings.size() == 1 ? "" : "s", r.checks_run.size(), skipped);
    for (const Finding& f : r.findings) {
      const CheckInfo* check = find_check(f.check);
      out += fmt::format("  {} {}: {}{}\n", f.check, check ? check->name : "",
                         f.where.empty() ? "" : f.where + ": ", f.message);
      if (check) out += fmt::format("        fix: {}\n", check->fix);
    }
  }
  if (!r.torch.empty()) out += fmt::format("      torch {}, CUDA {}\n", r.torch, r.cuda);
  if (!r.sass.empty() || !r.ptx.empty()) {
    out += fmt::format("      SASS {}{}\n", r.sass.empty() ? "none" : text::join(r.sass, " "),
                       r.ptx.empty() ? "" : ", PTX " + text::join(r.ptx, " "));
  }
  if (!r.min_glibc.empty()) out += fmt::format("      needs glibc >= {}\n", r.min_glibc);
  if (!r.import_test.empty()) out += fmt::format("      import test {}\n", r.import_test);
  for (const auto& [id, reason] : r.skipped) {
    if (id != "I001") out += fmt::format("      skipped {}: {}\n", id, reason);
  }
  if (r.provenance) {
    const Provenance& p = *r.provenance;
    out += fmt::format("      built by sagebuild {} from {}{}{}\n", p.sagebuild_version,
                       p.commit.empty() ? "an unknown commit" : p.commit.substr(0, 12),
                       p.dirty ? " (dirty tree)" : "", p.entry.empty() ? "" : ", entry " + p.entry);
  }
  return out;
}

}  // namespace sagebuild::wheel
