// Exit codes, documented in docs/cli.md and in `sagebuild --help`. Scripts and CI distinguish
// "you called it wrong" from "the configuration is wrong" from "the build/verification failed".
#pragma once

#include "util/expected.h"

namespace sagebuild::cli {

enum ExitCode : int {
  kSuccess = 0,
  kInternalError = 1,        // a bug in sagebuild: please report it
  kUsageError = 2,           // bad command line (unknown flag, unknown profile, ...)
  kConfigError = 3,          // matrix.yaml or a file it names is invalid
  kBuildFailure = 4,         // a build step failed
  kVerificationFailure = 5,  // a wheel failed verification
  kPublishFailure = 6,       // a release or registry upload failed (server, network, auth)
  kInterrupted = 130,        // stopped by SIGINT or SIGTERM (Ctrl-C, Ctrl-Break on Windows)
};

// The exit code of a failure of this kind: the one mapping (an error nobody classified is a bug).
constexpr ExitCode exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
      return kUsageError;
    case ErrorKind::config:
      return kConfigError;
    case ErrorKind::build:
      return kBuildFailure;
    case ErrorKind::verify:
      return kVerificationFailure;
    case ErrorKind::publish:
      return kPublishFailure;
    case ErrorKind::interrupted:
      return kInterrupted;
    case ErrorKind::unclassified:
    case ErrorKind::internal:
      break;
  }
  return kInternalError;
}

inline constexpr const char* kExitCodeHelp =
    "Exit codes: 0 success, 1 internal error, 2 usage error, 3 configuration error,\n"
    "4 build failure, 5 verification failure, 6 release/publish failure, 130 interrupted.";

}  // namespace sagebuild::cli
