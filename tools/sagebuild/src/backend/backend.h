// The ways `sagebuild build` builds entries, behind one interface (docs/architecture.md):
//   native  on this machine, each entry's phases in entry_build.h (g++ and nvcc)
//   docker  in containers: one `docker buildx bake` of the generated file (docker_build.h),
//           inside which sagebuild runs the native backend per entry
//   msvc    Windows entries (MSVC and nvcc, msvc.h): planned here, built on a Windows runner
// The command picks one (registry.h) and keeps what is common to all: the selection, the
// options, the results table and files, the exit code. A new backend is its folder under
// backend/ (its class, its doctor section) and one row in registry.cpp.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/build_options.h"
#include "backend/build_results.h"
#include "backend/doctor_report.h"
#include "backend/status.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "util/log.h"

namespace sagebuild::backend {

// Why a plan cannot be followed: the command line asked for what the backend does not do
// (`usage`), or this machine lacks what some entries need (`unavailable`).
struct PlanProblem {
  enum class Kind { none, usage, unavailable };
  Kind kind = Kind::none;
  std::string message;
  explicit operator bool() const { return kind != Kind::none; }
};

inline PlanProblem usage_problem(std::string message) {
  return {PlanProblem::Kind::usage, std::move(message)};
}

class BuildBackend {
 public:
  virtual ~BuildBackend() = default;
  virtual const char* name() const = 0;
  // Entries this backend does not build at all (a Windows entry for the native backend on Linux,
  // a platform without `docker:` for the Docker backend); checked before anything else.
  virtual PlanProblem refuse(const std::vector<matrix::Entry>& entries,
                             const BuildOptions& options) const = 0;
  // --dry-run: the plan, printed.
  virtual PlanProblem describe(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                               const BuildOptions& options, Log& log) const = 0;
  // Every entry's result, in the entries' order; the status is stopped on return.
  virtual std::vector<EntryResult> build(const matrix::Matrix& m,
                                         const std::vector<matrix::Entry>& entries,
                                         const BuildOptions& options, Status& status,
                                         Log& log) const = 0;
  // `sagebuild doctor`: what this machine has of what the entries need through this backend.
  virtual DoctorReport examine(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                               const BuildOptions& options) const = 0;
  // Whether --dry-run's plan needs nothing of this machine (no version, no toolchain): a plan
  // for another kind of runner.
  virtual bool plans_for_another_runner() const { return false; }
  // Whether its build is one long step whose output belongs in a CI log as it comes (rather
  // than only in its log file).
  virtual bool streams_build_output_on_ci() const { return false; }
};

}  // namespace sagebuild::backend
