#include "backend/msvc/msvc_backend.h"

#include <fmt/format.h>

#include "backend/msvc/msvc.h"
#include "backend/wheel_finish.h"

namespace sagebuild::backend {
namespace {

class MsvcBackend final : public BuildBackend {
 public:
  const char* name() const override { return "msvc"; }

  PlanProblem refuse(const std::vector<matrix::Entry>& entries,
                     const BuildOptions& o) const override {
    if (o.dry_run || entries.empty()) return {};
    return built_on_its_runner(entries.front());
  }

  PlanProblem describe(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions&, Log& log) const override {
    std::vector<MsvcEntryPlan> plans;
    for (const auto& e : entries)
      plans.push_back({e.id, identity_of(e).file_name, e.cuda, m.package.build_command});
    describe_msvc(plans, log);
    return {};
  }

  std::vector<EntryResult> build(const matrix::Matrix&, const std::vector<matrix::Entry>& entries,
                                 const BuildOptions& o, Status& status, Log&) const override {
    // refuse() stops this before any build; kept total for a caller that skips it.
    std::vector<EntryResult> results;
    for (const auto& e : entries) {
      EntryResult r;
      r.id = e.id;
      r.outcome = EntryOutcome::build_failed;
      r.message = refuse({e}, o).message;
      status.finished(r.id, false, r.message);
      results.push_back(std::move(r));
    }
    status.stop();
    return results;
  }

  // This machine cannot build a Windows entry: every one is refused, with where it builds.
  DoctorReport examine(const matrix::Matrix&, const std::vector<matrix::Entry>& entries,
                       const BuildOptions&) const override {
    DoctorReport report;
    for (const auto& e : entries)
      report.entries.push_back({e.id, false, built_on_its_runner(e).message});
    return report;
  }

  bool plans_for_another_runner() const override { return true; }
};

}  // namespace

std::unique_ptr<BuildBackend> make_msvc_backend() {
  return std::make_unique<MsvcBackend>();
}

PlanProblem built_on_its_runner(const matrix::Entry& e) {
  return usage_problem(fmt::format(
      "{} is a {} entry: it builds on a {} runner (the MSVC backend), not here (--dry-run shows "
      "its plan); pick --platform linux",
      e.id, e.os, e.os));
}

}  // namespace sagebuild::backend
