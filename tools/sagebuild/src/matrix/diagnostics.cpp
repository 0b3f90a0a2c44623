#include "matrix/diagnostics.h"

#include <fmt/format.h>

namespace sagebuild {
namespace {

std::string_view nth_line(std::string_view text, int line) {
  std::size_t start = 0;
  for (int i = 1; i < line; ++i) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) {
      return {};
    }
    ++start;
  }
  std::size_t end = text.find('\n', start);
  std::string_view result = text.substr(start, end == std::string_view::npos ? end : end - start);
  if (!result.empty() && result.back() == '\r') {
    result.remove_suffix(1);
  }
  return result;
}

}  // namespace

std::string format_headline(const Diagnostic& d) {
  if (d.location.line <= 0) {
    return fmt::format("{}: {}", d.file, d.message);
  }
  return fmt::format("{}:{}:{}: {}", d.file, d.location.line, d.location.column, d.message);
}

std::string render(const Diagnostic& d, std::string_view source_text) {
  std::string out = format_headline(d) + "\n";
  if (d.location.line > 0) {
    const std::string_view line = nth_line(source_text, d.location.line);
    if (!line.empty()) {
      const std::string number = std::to_string(d.location.line);
      const std::string gutter(number.size(), ' ');
      // Tabs stay tabs under the caret so that it lines up in any terminal.
      std::string padding;
      for (int i = 0; i + 1 < d.location.column && i < static_cast<int>(line.size()); ++i) {
        padding += line[static_cast<std::size_t>(i)] == '\t' ? '\t' : ' ';
      }
      const int length = std::max(1, d.location.length);
      out += fmt::format(" {} | {}\n", number, line);
      out += fmt::format(" {} | {}^{}\n", gutter, padding,
                         std::string(static_cast<std::size_t>(length - 1), '~'));
    }
  }
  if (!d.note.empty()) {
    out += fmt::format("  note: {}\n", d.note);
  }
  return out;
}

}  // namespace sagebuild
