// verify-wheel: every check a release manager needs before publishing a CUDA extension wheel,
// each with a stable id (selectable with --select/--ignore) and a one-line fix. Reads the wheel
// entry by entry (never the whole file into memory, nothing extracted to disk).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/version.h"
#include "wheel/provenance.h"
#include "wheel/zip_archive.h"

namespace sagebuild::wheel {

struct CheckInfo {
  std::string_view id;       // "R002": stable, never reused
  std::string_view name;     // "record-hash"
  std::string_view summary;  // what it checks
  std::string_view fix;      // what to do when it fails
};

std::span<const CheckInfo> check_catalog();
const CheckInfo* find_check(std::string_view id_or_name);

// What a wheel is expected to be: one matrix entry, in the terms verification needs.
struct ExpectedBuild {
  std::string id;
  std::string wheel;
  std::string fallback_wheel;  // the same build under the platform's fallback tag, if it has one
  Version torch;
  Version cuda;
  Version python;
  std::string platform_tag;
  std::vector<std::string> archs;
};

// Versions known from matrix.yaml, for decoding build tags without guessing.
struct KnownVersions {
  std::vector<Version> torch;
  std::vector<Version> cuda;
};

// --import-test: what to install and import, and what came of it. The work is done by a
// function the caller provides (backend/install_check.h), so this room runs no processes.
struct ImportRequest {
  std::string python;             // "3.12", or "" for a wheel of every Python: any will do
  std::string torch_requirement;  // "torch==2.8.*", or "" when the wheel pins none
  std::string module;             // "sageattention"
};

struct ImportOutcome {
  enum class Status { passed, failed, skipped } status;
  std::string detail;
};

using ImportTester =
    std::function<ImportOutcome(const std::filesystem::path& wheel, const ImportRequest&)>;

struct VerifyOptions {
  std::vector<std::string> select;  // ids, names or id prefixes ("R"); empty = all
  std::vector<std::string> ignore;
  std::optional<KnownVersions> known;
  std::vector<ExpectedBuild> known_entries;            // looked up by file name for their archs
  std::optional<std::vector<ExpectedBuild>> expected;  // the wheel must be one of these
  ZipLimits limits;
  unsigned threads = 0;        // 0: one per hardware thread
  ImportTester import_tester;  // set: run I001 (--import-test)
};

struct Finding {
  std::string check;  // id
  std::string where;  // entry path, or "" for the wheel as a whole
  std::string message;
};

// A report lists at most this many findings, each message and place cut to kMaxFindingText
// characters, and file names up to kMaxListedNameBytes in all.
inline constexpr std::size_t kMaxFindings = 1000;
inline constexpr std::size_t kMaxFindingText = 1000;
inline constexpr std::size_t kMaxListedNameBytes = 2u << 20;

struct WheelReport {
  std::string path;
  std::string file_name;
  std::vector<std::string> checks_run;  // selected and run (passed unless in findings)
  // Selected but not run, with the reason: I001 without --import-test, or without the wheel's
  // Python or torch here. Never counted as passed.
  std::vector<std::pair<std::string, std::string>> skipped;
  std::vector<Finding> findings;
  std::optional<Provenance> provenance;
  std::string torch;  // decoded from the build tag
  std::string cuda;
  std::vector<std::string> sass;  // images found in the binaries: "sm_90a"
  std::vector<std::string> ptx;
  std::string min_glibc;  // highest GLIBC_ version the binaries need
  // The oldest manylinux policy the binaries' symbol versions meet ("" when none), and the
  // libraries they need that are on no policy's list (torch's included): what auditwheel show
  // reports, so that the two can be compared.
  std::string manylinux;
  std::vector<std::string> external_libraries;
  std::string import_test;  // "", "passed: <module path>", "skipped: <why>", "failed: <why>"
  // What an installer reads: every file entry with its size and sha256 (urlsafe base64, no
  // padding) as read from the archive, and METADATA's Requires-Dist values as parsed.
  struct File {
    std::string name;
    std::uint64_t size = 0;
    std::string sha256;
  };
  std::vector<File> files;
  std::vector<std::string> requires_dist;
  std::uint64_t file_size = 0;
  std::uint64_t inflated = 0;
  std::size_t entries = 0;
  double seconds = 0;
  // Bounds on what a hostile wheel can make a report hold (kMaxFindings, kMaxListedNameBytes):
  // what is past them is counted, not listed.
  std::size_t findings_not_listed = 0;
  std::size_t files_not_listed = 0;

  bool ok() const { return findings.empty() && findings_not_listed == 0; }
  std::size_t problems() const { return findings.size() + findings_not_listed; }
};

bool is_selected(std::string_view id, const VerifyOptions& options);

WheelReport verify_wheel(const std::filesystem::path& path, const VerifyOptions& options);

nlohmann::ordered_json report_to_json(const WheelReport& report);
std::string format_report(const WheelReport& report);

}  // namespace sagebuild::wheel
