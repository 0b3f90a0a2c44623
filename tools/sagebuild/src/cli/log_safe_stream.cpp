#include "cli/log_safe_stream.h"

#include <random>

#include <fmt/format.h>

namespace sagebuild::cli {
namespace {

// The mark of sagebuild's own commands: a control character and a number drawn when the
// process starts, which no input can know in advance.
const std::string& own_command_mark() {
  static const std::string mark = [] {
    std::random_device random;
    return fmt::format("\x1e{:08x}{:08x}\x1e", random(), random());
  }();
  return mark;
}

}  // namespace

std::string workflow_command(std::string_view command) {
  return own_command_mark() + std::string(command);
}

void LogSafeBuffer::flush_line(bool newline) {
  std::string out;
  std::string_view line = line_;
  const bool own = line.starts_with(own_command_mark());
  if (own) line.remove_prefix(own_command_mark().size());
  // The runner trims Unicode white space (no-break and other spaces too) before it looks for
  // "::": skip every space, control and non-ASCII byte, to be sure.
  std::size_t first = 0;
  while (first < line.size() && (static_cast<unsigned char>(line[first]) <= 0x20 ||
                                 static_cast<unsigned char>(line[first]) >= 0x7f))
    ++first;
  if (!own && line.substr(first).starts_with("::")) {
    out += "| ";  // the runner trims spaces, not this
  }
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t') {
      if (controls_ == Controls::keep && c != '\x1e') {
        out += c;
      } else {
        out += fmt::format("\\x{:02x}", u);
      }
    } else if (!own && c == '#' && line.substr(i).starts_with("##[")) {
      out += "##\\u005b";  // JSON reads it back as "##[", the runner sees no command
      i += 2;
    } else {
      out += c;
    }
  }
  if (newline) out += '\n';
  target_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
  line_.clear();
}

LogSafeBuffer::int_type LogSafeBuffer::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  const char c = traits_type::to_char_type(ch);
  if (c == '\n') {
    flush_line(true);
  } else {
    line_ += c;
    // A line without an end is held up to 64 KiB; past that it is written in pieces (its start
    // was judged with the first piece).
    if (line_.size() >= 64 * 1024) flush_line(false);
  }
  return ch;
}

int LogSafeBuffer::sync() {
  // On a terminal an unfinished line (a progress redraw) is written at once; elsewhere it waits
  // for its newline, so that the filter judges the whole line.
  if (controls_ == Controls::keep && !line_.empty()) flush_line(false);
  return target_->pubsync();
}

LogSafeStream::LogSafeStream(std::ostream& stream, LogSafeBuffer::Controls controls)
    : stream_(stream), original_(stream.rdbuf()), buffer_(original_, controls) {
  stream_.rdbuf(&buffer_);
}

LogSafeStream::~LogSafeStream() {
  stream_.flush();
  buffer_.finish();
  stream_.rdbuf(original_);
}

}  // namespace sagebuild::cli
