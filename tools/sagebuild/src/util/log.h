// How sagebuild speaks. Every command and build writes its lines through one Log, which knows
// how much the user asked to hear (-q, -v) and where each kind of line goes, so that functions
// deep in a build say what happened by its level instead of being handed a stream and a flag.
//
//   result   what the user asked for (tables, reports, plans, wheel paths): stdout, always
//   info     progress and status ("sagebuild: 3 entries ..."): stdout, not with -q
//   detail   each command a build runs, each check's outcome: stdout, only with -v
//   warning  stderr, always
//   error    stderr, always (the command's own error line is cli/app.cpp's)
//
// A call writes its text whole, under a lock, so lines from the entries' worker threads never
// interleave inside a call. Text is written as given: callers end their lines with "\n".
#pragma once

#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace sagebuild {

class Log {
 public:
  enum class Level { error, warning, info, detail };  // most important first

  // `shown`: the least important level written (-q: warning, default: info, -v: detail).
  Log(std::ostream& out, std::ostream& err, Level shown) : out_(out), err_(err), shown_(shown) {}
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // Set once the command line is read (-q, -v), before anything is written.
  void show(Level shown) { shown_ = shown; }
  bool shows(Level level) const { return level <= shown_; }
  bool quiet() const { return shown_ < Level::info; }
  bool verbose() const { return shown_ >= Level::detail; }

  template <typename... Args>
  void result(fmt::format_string<Args...> format, Args&&... args) {
    write(out_, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void info(fmt::format_string<Args...> format, Args&&... args) {
    if (shows(Level::info)) write(out_, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void detail(fmt::format_string<Args...> format, Args&&... args) {
    if (shows(Level::detail)) write(out_, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void warning(fmt::format_string<Args...> format, Args&&... args) {
    write(err_, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void error(fmt::format_string<Args...> format, Args&&... args) {
    write(err_, fmt::format(format, std::forward<Args>(args)...));
  }

  // The result stream itself, for writers that take an std::ostream (a live progress display, a
  // child process's output passed through). Whoever holds it writes outside the lock.
  std::ostream& result_stream() { return out_; }

 private:
  void write(std::ostream& stream, std::string_view text);

  std::ostream& out_;
  std::ostream& err_;
  Level shown_;
  std::mutex mutex_;
};

}  // namespace sagebuild
