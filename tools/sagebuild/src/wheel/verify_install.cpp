#include <algorithm>

#include <fmt/format.h>

#include "util/text.h"
#include "wheel/naming.h"
#include "wheel/verifier.h"

namespace sagebuild::wheel {

// I001 did not run: it leaves checks_run for skipped, with the reason.
void Verifier::skip_import(const std::string& why) {
  std::erase(report_.checks_run, "I001");
  report_.skipped.emplace_back("I001", why);
  report_.import_test = "skipped: " + why;
}

// ---- I001: install and import, only for wheels that passed everything else ----
void Verifier::check_import() {
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

}  // namespace sagebuild::wheel
