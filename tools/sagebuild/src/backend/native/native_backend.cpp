#include "backend/native/native_backend.h"

#include <fmt/format.h>

#include "backend/msvc/msvc_backend.h"
#include "backend/native/build_plan.h"
#include "backend/native/doctor.h"
#include "backend/native/entry_build.h"

namespace sagebuild::backend {
namespace {

class NativeBackend final : public BuildBackend {
 public:
  const char* name() const override { return "native"; }

  PlanProblem refuse(const std::vector<matrix::Entry>& entries,
                     const BuildOptions&) const override {
    for (const auto& e : entries) {
      if (e.os != "linux") return built_on_its_runner(e);
    }
    return {};
  }

  PlanProblem describe(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions& o, Log& log) const override {
    const auto unavailable = describe_entries(m, entries, o, log);
    log.result("sagebuild: {} of {} entr{} can build here", entries.size() - unavailable.size(),
               entries.size(), entries.size() == 1 ? "y" : "ies");
    if (unavailable.empty()) {
      log.result("\n");
      return {};
    }
    log.result("; {} cannot:\n", unavailable.size());
    for (const auto& u : unavailable)
      log.result("  {}: {}\n", u.id, u.reason.substr(0, u.reason.find(':')));
    if (o.skip_unavailable) return {};
    return {PlanProblem::Kind::unavailable,
            fmt::format("{} entr{} cannot build on this machine (see above; --skip-unavailable "
                        "builds the others)",
                        unavailable.size(), unavailable.size() == 1 ? "y" : "ies")};
  }

  std::vector<EntryResult> build(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                                 const BuildOptions& o, Status& status, Log& log) const override {
    return build_entries(m, entries, o, status, log);
  }

  DoctorReport examine(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions& o) const override {
    return examine_native(m, entries, o);
  }
};

}  // namespace

std::unique_ptr<BuildBackend> make_native_backend() {
  return std::make_unique<NativeBackend>();
}

}  // namespace sagebuild::backend
