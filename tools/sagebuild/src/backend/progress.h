// What a multi-entry build tells while it runs: each entry's phases, notes and end. The
// displays (a live terminal view, plain lines, GitHub groups) are the command line's
// (cli/progress_display.h). Implementations are called from the entries' worker threads.
#pragma once

#include <string>

namespace sagebuild::backend {

class Progress {
 public:
  virtual ~Progress() = default;
  virtual void phase(const std::string& id, const std::string& phase) = 0;
  virtual void note(const std::string& id, const std::string& line) = 0;
  // `ok` false: the entry failed or was interrupted; `line` says how it ended.
  virtual void finished(const std::string& id, bool ok, const std::string& line) = 0;
  virtual void stop() = 0;  // before the final summary: ends the live display
};

}  // namespace sagebuild::backend
