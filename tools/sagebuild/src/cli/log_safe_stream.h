// Every line sagebuild prints can reach a GitHub Actions log, where the runner acts on a line
// that starts with "::" (after spaces: "::add-mask::", "::error::", "::stop-commands::") and on
// "##[" anywhere in it. Text from wheels, matrix.yaml and servers is printed in many places, so
// the guard sits where it all passes: a filter on the process's stdout and stderr that
//   - neutralises such lines ("| ::add-mask::x") unless they are sagebuild's own commands,
//     which are marked at their source with workflow_command(), and writes "##[" as
//     "##\u005b" (which a JSON reader reads back as "##[": --json output keeps its data);
//   - writes C0 control characters other than tab and newline as "\x1b" (escape sequences,
//     carriage returns that overwrite a line), on a terminal too: there only sagebuild's own
//     sequences (the progress display's cursor moves and colours), marked at their source with
//     terminal_control(), reach the terminal. A wheel entry named "\x1b[1A\x1b[2K" erases no
//     line and sets no window title.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace sagebuild::cli {

// `command` ("::group::x", "::error file=..::msg") marked as sagebuild's own, so that the
// filter lets it through. The mark holds a number drawn at start-up, so text from elsewhere
// cannot carry it.
std::string workflow_command(std::string_view command);

// A terminal control sequence of sagebuild's own ("\x1b[32m", "\x1b[1A"), marked so that the
// filter passes it to a terminal; off a terminal it is dropped.
std::string terminal_control(std::string_view sequence);

class LogSafeBuffer final : public std::streambuf {
 public:
  enum class Controls { escape, keep };
  LogSafeBuffer(std::streambuf* target, Controls controls) : target_(target), controls_(controls) {}

  // Writes what is left of an unfinished line.
  void finish() {
    if (!line_.empty()) flush_line(false);
    target_->pubsync();
  }

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  void flush_line(bool newline);
  void flush_piece();  // a long line's next piece, before its end
  void write_line(bool newline, bool continued);

  std::streambuf* target_;
  Controls controls_;
  std::string line_;
  bool continued_ = false;  // line_ continues a piece already written
};

// Installs the filter on `stream` for the lifetime of the object, and restores it after.
class LogSafeStream {
 public:
  LogSafeStream(std::ostream& stream, LogSafeBuffer::Controls controls);
  ~LogSafeStream();
  LogSafeStream(const LogSafeStream&) = delete;
  LogSafeStream& operator=(const LogSafeStream&) = delete;

 private:
  std::ostream& stream_;
  std::streambuf* original_;
  LogSafeBuffer buffer_;
};

}  // namespace sagebuild::cli
