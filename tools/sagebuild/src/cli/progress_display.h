// How `sagebuild build` shows a multi-entry build while it runs, in the form the reader needs:
//   live   on a terminal: one line per running entry (elapsed time, phase), redrawn in place;
//          finished entries and notes scroll above it
//   plain  not a terminal: one line per event, prefixed with the entry id
//   github under GitHub Actions: one ::group:: per entry, printed whole when the entry ends (so
//          parallel entries never interleave), and ::error for failures
// Quiet (--quiet), any style shows only the entries that failed.
// Thread-safe.
#pragma once

#include <memory>
#include <ostream>

#include "backend/progress.h"

namespace sagebuild::cli {

enum class ProgressStyle { live, plain, github };

struct ProgressOptions {
  bool color = true;   // live: colour the marks and timers (off for NO_COLOR)
  bool quiet = false;  // only failed entries' lines
};

std::unique_ptr<backend::Progress> make_progress(ProgressStyle style, std::ostream& out,
                                                 ProgressOptions options = {});

}  // namespace sagebuild::cli
