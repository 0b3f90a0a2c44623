// How `sagebuild build` shows a multi-entry build while it runs, in the form the reader needs:
//   live   on a terminal: one line per running entry (elapsed time, phase), redrawn in place;
//          finished entries and notes scroll above it
//   plain  not a terminal: one line per event, prefixed with the entry id
//   github under GitHub Actions: one ::group:: per entry, printed whole when the entry ends (so
//          parallel entries never interleave), and ::error for failures
// Thread-safe.
#pragma once

#include <memory>
#include <ostream>

#include "backend/progress.h"

namespace sagebuild::cli {

enum class ProgressStyle { live, plain, github };

std::unique_ptr<backend::Progress> make_progress(ProgressStyle style, std::ostream& out);

}  // namespace sagebuild::cli
