// How `sagebuild build` shows a multi-entry build while it runs, in the form the reader needs:
//   live   on a terminal: one line per running entry (elapsed time, phase), redrawn in place;
//          finished entries and notes scroll above it
//   plain  not a terminal: one line per event, prefixed with the entry id
//   github under GitHub Actions: one ::group:: per entry, printed whole when the entry ends (so
//          parallel entries never interleave), and ::error for failures
// Quiet (--quiet), any style shows only the entries that failed. The entries' log lines (each
// command and its output) show only when asked (LogEcho). Thread-safe.
#pragma once

#include <memory>
#include <ostream>

#include "backend/status.h"

namespace sagebuild::cli {

enum class ProgressStyle { live, plain, github };

// What a display does with the entries' log lines (backend::Status::log_line).
enum class LogEcho {
  off,       // only in the logs
  as_notes,  // --verbose: shown as notes are (github: inside the entry's group)
  at_once,   // github, a backend whose build is one long step (Docker's bake): printed as they
             // come, "[id] line", so that the Actions log shows the step while it runs
};

struct ProgressOptions {
  bool color = true;   // live: colour the marks and timers (off for NO_COLOR)
  bool quiet = false;  // only failed entries' lines
  LogEcho logs = LogEcho::off;
};

std::unique_ptr<backend::Status> make_progress(ProgressStyle style, std::ostream& out,
                                               ProgressOptions options = {});

}  // namespace sagebuild::cli
