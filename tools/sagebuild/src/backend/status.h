// The one sink of what a build tells while it runs, as ninja's Status is: each entry's phases,
// notes, log lines and end. The entries' logs (backend/entry_log.h) and the displays (a live
// terminal view, plain lines, GitHub groups: cli/progress_display.h) are what it feeds; nothing
// else in a build writes to the console or to a log. Implementations are called from the
// entries' worker threads.
#pragma once

#include <string>
#include <string_view>

namespace sagebuild::backend {

class Status {
 public:
  virtual ~Status() = default;
  virtual void phase(const std::string& id, const std::string& phase) = 0;
  // A line for the reader: what the entry found or decided ("compile cache: 31 hits").
  virtual void note(const std::string& id, const std::string& line) = 0;
  // A line of the entry's log that is not a note: a command it ran, a line of that command's
  // output, a report. `id` is the log's name (an entry, or "docker-bake" for Docker's one log);
  // displays show these only when asked to (--verbose, or a one-step build on CI).
  virtual void log_line(const std::string& id, std::string_view line) = 0;
  // `ok` false: the entry failed or was interrupted; `line` says how it ended.
  virtual void finished(const std::string& id, bool ok, const std::string& line) = 0;
  virtual void stop() = 0;  // before the final summary: ends the live display
};

}  // namespace sagebuild::backend
