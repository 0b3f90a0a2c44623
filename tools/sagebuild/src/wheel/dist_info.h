// The text files of a wheel's .dist-info: RECORD (CSV as Python's csv module writes it) and
// WHEEL / METADATA (RFC 822 style headers as Python's email parser reads them).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/expected.h"

namespace sagebuild::wheel {

struct RecordRow {
  std::string path;
  std::string hash;  // "sha256=<urlsafe b64, no padding>" or "" (RECORD's own row)
  std::string size;  // decimal text or ""
  int line = 0;
};

// Python csv "excel" dialect: ',' separated, '"' quoting with '""' escapes, \n or \r\n rows.
Expected<std::vector<RecordRow>> parse_record(std::string_view text);

struct EntryPoint {
  std::string group, name, value;
  int line = 0;
};

// entry_points.txt, accepted only where importlib.metadata (str.splitlines, strip, strip('[]')),
// pkg_resources and configparser read the same entries: printable ASCII and tab, \n or \r\n
// line ends, '#' comments, exact '[group]' headers, 'name = value' entries, no group or entry
// twice, 'module:function' values for console_scripts and gui_scripts. Errors name the line.
Expected<std::vector<EntryPoint>> parse_entry_points(std::string_view text);

class Headers {
 public:
  // Header lines up to the first blank line; continuation lines (leading space/tab) fold into
  // the previous value. Keys are compared case-insensitively.
  static Expected<Headers> parse(std::string_view text);

  std::vector<std::string> all(std::string_view key) const;
  std::optional<std::string> first(std::string_view key) const;
  std::size_t count(std::string_view key) const { return all(key).size(); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// The text of `{name}-{version}.dist-info/<member>` in the wheel at `wheel` ("METADATA").
Expected<std::string> read_dist_info_member(const std::filesystem::path& wheel,
                                            std::string_view member);

}  // namespace sagebuild::wheel
