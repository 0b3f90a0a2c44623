// How a multi-entry build reports itself while it runs, in the form the reader needs:
//   live   on a terminal: one line per running entry (phase, elapsed time), redrawn in place;
//          finished entries and notes scroll above it
//   plain  not a terminal: one line per event, prefixed with the entry id
//   github under GitHub Actions: one ::group:: per entry, printed whole when the entry ends (so
//          parallel entries never interleave), and ::error for failures
// Thread-safe: entries call it from their worker threads.
#pragma once

#include <memory>
#include <ostream>
#include <string>

namespace sagebuild::backend {

enum class ProgressStyle { live, plain, github };

class Progress {
 public:
  virtual ~Progress() = default;
  virtual void phase(const std::string& id, const std::string& phase) = 0;
  virtual void note(const std::string& id, const std::string& line) = 0;
  // `ok` false: the entry failed or was interrupted; `line` says how it ended.
  virtual void finished(const std::string& id, bool ok, const std::string& line) = 0;
  virtual void stop() = 0;  // before the final summary: ends the live display
};

std::unique_ptr<Progress> make_progress(ProgressStyle style, std::ostream& out);

}  // namespace sagebuild::backend
