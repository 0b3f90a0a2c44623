// What every sagebuild command is and shares. A command is a class with its flags (define: adds
// them to its CLI11 subcommand) and its work (run); cli/commands/commands.cpp lists them all in
// one table, and cli/app.cpp parses the command line against it. The base class holds the
// output streams, the --matrix option, and the helpers most commands need: loading matrix.yaml
// (with located diagnostics), the version and git state a build starts from, and tables.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "matrix/diagnostics.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "util/log.h"
#include "vcs/git.h"
#include "vcs/release_version.h"
#include "wheel/verify.h"

namespace sagebuild::cli {

// Thrown by commands; caught once in run(), which prints "sagebuild: error: ..." and exits with
// the code of its kind (exit_code_for).
struct CommandError {
  ErrorKind kind;
  std::string message;

  CommandError(ErrorKind what, std::string text) : kind(what), message(std::move(text)) {}
  // A lower layer's error, with the kind it was given (Error::as gives one where it has none).
  explicit CommandError(const Error& error) : kind(error.kind), message(error.message) {}
  ExitCode code() const { return exit_code_for(kind); }
};

struct LoadedMatrix {
  matrix::Matrix matrix;
  std::filesystem::path root;   // directory of matrix.yaml: relative paths start here
  std::string display_name;     // how messages name the file
  std::string package_version;  // read from package.version
};

// What a command is built with: its voice (util/log.h: -q and -v set its level), and the global
// options (filled in by parsing).
struct Context {
  Log& log;
  const std::string& matrix_option;
};

class Command {
 public:
  explicit Command(const Context& context)
      : log_(context.log), matrix_option(context.matrix_option) {}
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  virtual void define(CLI::App& cmd) = 0;
  virtual int run() = 0;

 protected:
  // matrix.yaml: --matrix, else the nearest one upwards; problems printed where they are.
  LoadedMatrix load() const;
  // The matrix when one is given or found; verify-wheel works without one.
  std::optional<LoadedMatrix> load_if_present() const;
  // Adds to `options` what verification holds wheels to beyond their own contents: matrix.yaml's
  // torch and CUDA versions (build tags decoded without guessing) and its entries (the
  // architectures a wheel of that name must carry). verify-wheel, publish and release.
  static void add_matrix_expectations(const LoadedMatrix& m, wheel::VerifyOptions& options);
  std::vector<matrix::Entry> expand(const LoadedMatrix& m, const std::string& profile,
                                    const std::string& platform) const;
  // The entries a build (or doctor) names: a profile's (all, or those of `ids` in it), or the
  // entries `ids` names anywhere in the matrix, or every entry of the platform.
  std::vector<matrix::Entry> select_entries(const LoadedMatrix& m, const std::string& profile,
                                            const std::vector<std::string>& ids,
                                            const std::string& platform) const;

  struct SourceVersion {
    std::optional<vcs::GitState> git;
    vcs::ResolvedVersion resolved;
  };
  // The version this checkout's wheels get, from the version file and git (vcs/).
  SourceVersion source_version(const LoadedMatrix& m) const;
  // What every build starts from: the version (and git state), --require-clean enforced, and
  // SOURCE_DATE_EPOCH: the caller's, else the commit's time, else 1980-01-01.
  struct BuildSource {
    std::string version;
    std::optional<vcs::GitState> git;
    std::int64_t source_date_epoch;
  };
  BuildSource build_source(const LoadedMatrix& m, bool require_clean) const;

  // Every problem up to kMaxShownProblems; a file with thousands (a generated one gone wrong)
  // gets the first ones and a count, not pages of repetition.
  static constexpr std::size_t kMaxShownProblems = 50;
  void report_diagnostics(const Diagnostics& diagnostics, std::string_view source) const;
  void print_table(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows) const;
  void print_entry_table(const std::string& profile, const std::string& platform,
                         const std::string& version,
                         const std::vector<matrix::Entry>& entries) const;
  // The wheels named on the command line: files as given, directories for their *.whl (sorted).
  static std::vector<std::filesystem::path> wheel_files(const std::string& command,
                                                        const std::vector<std::string>& inputs);

  // Results, status lines ("sagebuild: 3 entries of profile stable ..."), details, warnings:
  // each at its level (util/log.h).
  Log& log_;
  const std::string& matrix_option;  // --matrix / SAGEBUILD_MATRIX
};

// The first of these environment variables that is set and not empty, else `fallback`.
std::string env_or(std::initializer_list<const char*> names, std::string fallback = {});

}  // namespace sagebuild::cli
