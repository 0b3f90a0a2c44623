// The install check (verify-wheel --import-test, I001): install a wheel into a fresh virtual
// environment of its Python, with the torch its pin names, and import it. "Skipped" (with the
// reason) when that Python or that torch cannot be had on this machine; "failed" when the wheel
// itself does not install or import.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "wheel/verify.h"

namespace sagebuild::backend {

struct InstallCheckOptions {
  // An interpreter that already has torch (an existing environment): the venv sees its
  // site-packages and only the wheel is installed. Empty: find the wheel's Python and install
  // torch from pip's configured index.
  std::filesystem::path python;
  // Python run after the import (matrix.yaml package.import_check); its failure fails the check.
  std::string check;
  std::chrono::minutes install_timeout{30};
};

wheel::ImportOutcome run_install_check(const std::filesystem::path& wheel_path,
                                       const wheel::ImportRequest& request,
                                       const InstallCheckOptions& options);

}  // namespace sagebuild::backend
