#include "cli/log_safe_stream.h"

#include <random>

#include <fmt/format.h>

#include "util/secrets.h"

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

// The mark around a terminal control sequence of sagebuild's own: the same number between other
// separators, so that a sequence at the start of a line is not taken for a workflow command.
const std::string& own_control_mark() {
  static const std::string mark = "\x1f" + own_command_mark().substr(1, 16) + "\x1f";
  return mark;
}

}  // namespace

std::string workflow_command(std::string_view command) {
  return own_command_mark() + std::string(command);
}

std::string terminal_control(std::string_view sequence) {
  return own_control_mark() + std::string(sequence) + own_control_mark();
}

void LogSafeBuffer::flush_piece() {
  std::string tail = std::move(line_);
  line_ = take_redacted(tail);
  write_line(false, continued_);
  line_ = std::move(tail);
  continued_ = true;
}

void LogSafeBuffer::flush_line(bool newline) {
  // The environment's secrets first (util/secrets.h): whatever printed them, they go no further.
  line_ = redact_environment_secrets(std::move(line_));
  write_line(newline, continued_);
  continued_ = false;
}

void LogSafeBuffer::write_line(bool newline, bool continued) {
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
  if (!own && !continued && line.substr(first).starts_with("::")) {
    out += "| ";  // the runner trims spaces, not this
  }
  const std::string& mark = own_control_mark();
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '\x1f' && line.compare(i, mark.size(), mark) == 0) {
      // One of sagebuild's own sequences, between two marks: to a terminal, or nowhere.
      const std::size_t end = line.find(mark, i + mark.size());
      if (end == std::string_view::npos) {
        i += mark.size() - 1;
        continue;
      }
      if (controls_ == Controls::keep) out += line.substr(i + mark.size(), end - i - mark.size());
      i = end + mark.size() - 1;
    } else if (u < 0x20 && c != '\t') {
      out += fmt::format("\\x{:02x}", u);
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
    // was judged with the first piece), each masked with the tail that could begin a secret
    // held back for the next.
    if (line_.size() >= std::size_t{64} * 1024) flush_piece();
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
