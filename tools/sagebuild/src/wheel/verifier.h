// The verifier behind verify-wheel (verify.h), shared by the files that hold its check families:
//   verify.cpp            the order of the checks, and reading every entry once
//   verify_names.cpp      N: the file name, the build tag, the expected entry; A002-A005: entry
//                         names
//   verify_dist_info.cpp  R, H, M, P: RECORD, WHEEL, METADATA, provenance
//   verify_binaries.cpp   B: the compiled modules (format, libraries, symbol versions, archs)
//   verify_install.cpp    I: the install check
//   verify_report.cpp     the text and JSON reports
//   check_catalog.cpp     the ids, names, summaries and fixes of every check
// Not part of the interface: only those files include it.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheel/dist_info.h"
#include "wheel/elf.h"
#include "wheel/filename.h"
#include "wheel/pe.h"
#include "wheel/verify.h"
#include "wheel/zip_archive.h"

namespace sagebuild::wheel {

// What reading one archive entry found (every entry is read once, in parallel).
struct EntryReading {
  std::optional<ZipError> error;
  std::string digest;  // urlsafe base64 sha256
  std::uint64_t size = 0;
  std::optional<std::string> text;  // kept for .dist-info files
  bool binary = false;              // looked like a compiled module
  std::optional<Expected<ElfInfo>> elf;
  std::optional<Expected<PeInfo>> pe;
};

// A command the wheel may install (a script of .data/scripts or an entry point): one named after
// the project, never pip, python, torchrun or another distribution's tool.
bool is_own_command(std::string_view command, std::string_view escaped_project);

// The finding for a command that is not the project's own: "<what> would install into ...".
std::string foreign_command(std::string_view what);

// Why the archive entry `name` would install outside what the wheel owns, or nothing.
// `escaped`: the project's escaped name; `prefix`: "{escaped}-{version}".
std::optional<std::string> outside_install_scope(const std::string& name,
                                                 const std::string& escaped,
                                                 const std::string& prefix);

// Why a DT_RPATH/DT_RUNPATH element of the binary at `binary` (its path in the wheel) is unsafe,
// or nothing: it must start with $ORIGIN and stay inside site-packages once installed.
std::optional<std::string> unsafe_search_path(const std::string& binary,
                                              const std::string& search_path);

class Verifier {
 public:
  Verifier(const std::filesystem::path& path, const VerifyOptions& options, WheelReport& report)
      : path_(path), options_(options), report_(report) {}

  void run();

 private:
  void fail(std::string_view id, std::string where, std::string message);

  // ---- N001: the file name ----
  void check_filename();

  // ---- A002-A005: what the central directory says ----
  void check_entry_names(const ZipArchive& archive);

  // ---- read every entry once, in parallel: CRC, sizes, hash, and binaries parsed in place ----
  void read_entries(const ZipArchive& archive);

  const EntryReading* find(const ZipArchive& archive, const std::string& name) const;

  std::optional<Headers> headers(const ZipArchive& archive, const std::string& file,
                                 std::string_view id);

  // ---- R, H, M and P checks: the .dist-info files ----
  void check_dist_info(const ZipArchive& archive);

  void check_record(const ZipArchive& archive, const std::string& record_path);

  void check_wheel_file(const ZipArchive& archive, const std::string& path);

  void check_metadata(const ZipArchive& archive, const std::string& path);

  void check_entry_points(const ZipArchive& archive, const std::string& path);

  void check_single(const Headers& h, const std::string& path, std::string_view id,
                    std::initializer_list<std::string_view> keys);

  // Requires-Python must admit the Python the cp tag names; each clause checked against X.Y.
  void check_requires_python(const std::string& path, const std::string& spec);

  void check_provenance(const Provenance& p);

  // ---- N002: decode the build tag against what is known, never by guessing digits ----
  void check_build_tag();

  // ---- N003: is this the wheel a matrix entry expects? ----
  void check_expected();

  // ---- B001-B004: the compiled modules ----
  // Without a valid file name the platform is unknown: the binaries are still read (their
  // architectures and glibc needs are reported) but not judged against a platform.
  void check_binaries(const ZipArchive& archive);

  // A wheel whose tags take every Python 3 (py3-none, cp3X-abi3): its binaries must not need
  // one Python's library or API.
  bool for_every_python() const;

  // ---- B005: no libpython, no CPython API ----
  void check_no_libpython(const std::string& path, const ElfInfo& elf);

  // "3.12" from a cp312 tag of the file name, or "" when it names no CPython.
  std::string cpython_version() const;

  // I001 did not run: it leaves checks_run for skipped, with the reason.
  void skip_import(const std::string& why);

  // ---- I001: install and import, only for wheels that passed everything else ----
  void check_import();

  // A CPython extension named for one interpreter ("*.cpython-312-*.so") must match the cp tag.
  void check_extension_suffix(const std::string& path);

  const std::filesystem::path& path_;
  const VerifyOptions& options_;
  WheelReport& report_;
  std::optional<WheelFilename> name_;
  std::vector<EntryReading> results_;
  std::vector<std::string> torch_requirements_;
  std::vector<std::string> expected_archs_;
};

}  // namespace sagebuild::wheel
