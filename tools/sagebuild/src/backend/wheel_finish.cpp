#include "backend/wheel_finish.h"

#include <fmt/format.h>

#include "platform/process.h"
#include "util/fs.h"
#include "util/sha256.h"
#include "wheel/repack.h"

namespace sagebuild::backend {

namespace stdfs = std::filesystem;

wheel::WheelIdentity identity_of(const matrix::Entry& e) {
  return wheel::identify({e.package, e.package_version, e.torch, e.cuda, e.python,
                          matrix::every_python(e.abi), e.abi == matrix::Abi::stable, e.platform_tag,
                          e.fallback_platform_tag, e.archs});
}

wheel::ExpectedBuild expected_build(const matrix::Entry& e) {
  const wheel::WheelIdentity id = identity_of(e);
  return {e.id,   id.file_name, id.fallback_file_name, e.torch,
          e.cuda, e.python,     e.platform_tag,        id.archs};
}

FinishedWheel finish_wheel(const WheelToFinish& r, std::ostream& report_out) {
  FinishedWheel result{FinishedWheel::Outcome::repack_failed, {}, {}, {}, 0, 0, {}};
  std::error_code ec;
  stdfs::remove_all(r.work, ec);  // a wheel left by an earlier failed verification
  stdfs::create_directories(r.work, ec);
  wheel::RepackRequest repack{r.produced, r.work, r.build_tag, r.provenance};
  repack.version = r.version;
  repack.tags = r.tags;
  repack.source_date_epoch = r.source_date_epoch;
  auto repacked = wheel::repack_wheel(repack);
  if (!repacked) {
    result.message = "re-packing the wheel failed: " + repacked.error().message;
    return result;
  }
  return verify_and_move(*repacked, r.dist, r.expected, r.import_tester, report_out);
}

FinishedWheel verify_and_move(const stdfs::path& wheel, const stdfs::path& dist,
                              const wheel::ExpectedBuild& expected_build,
                              const wheel::ImportTester& import_tester, std::ostream& report_out) {
  FinishedWheel result{FinishedWheel::Outcome::verification_failed, {}, wheel, {}, 0, 0, {}};
  wheel::VerifyOptions verify;
  verify.known = wheel::KnownVersions{{expected_build.torch}, {expected_build.cuda}};
  wheel::ExpectedBuild expected = expected_build;
  expected.wheel = wheel.filename().string();
  verify.known_entries.push_back(expected);
  verify.import_tester = import_tester;
  const wheel::WheelReport report = wheel::verify_wheel(wheel, verify);
  report_out << wheel::format_report(report);
  result.checks = report.checks_run.size();
  if (!report.ok()) {
    result.message = fmt::format("{} failed verification; it stays in {}",
                                 wheel.filename().string(), wheel.parent_path().string());
    for (const auto& f : report.findings) {
      result.findings +=
          fmt::format("{} {}{}\n", f.check, f.where.empty() ? "" : f.where + ": ", f.message);
    }
    return result;
  }
  // Ctrl-C during verification: whatever the checks said, they did not all run to the end.
  if (platform::stop_requested()) {
    result.message = "interrupted during verification";
    return result;
  }
  const stdfs::path target = dist / wheel.filename();
  std::error_code ec;
  stdfs::create_directories(dist, ec);
  if (auto moved = fs::move_file(wheel, target); !moved) {
    result.outcome = FinishedWheel::Outcome::move_failed;
    result.message =
        fmt::format("cannot move the wheel into {}: {}", dist.string(), moved.error().message);
    return result;
  }
  result.wheel = target;
  auto digest = sha256_file(target);
  if (digest) {
    result.sha256 = to_hex(digest->digest);
    result.size = digest->size;
  }
  result.outcome = FinishedWheel::Outcome::moved;
  return result;
}

}  // namespace sagebuild::backend
