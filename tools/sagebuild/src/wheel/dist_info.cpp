#include "wheel/dist_info.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/text.h"
#include "wheel/filename.h"
#include "wheel/naming.h"
#include "wheel/zip_archive.h"

namespace sagebuild::wheel {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

Expected<std::vector<RecordRow>> parse_record(std::string_view text) {
  std::vector<RecordRow> rows;
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false, field_started = false;
  int line = 1, row_line = 1;
  auto end_row = [&]() -> std::optional<Error> {
    fields.push_back(field);
    field.clear();
    field_started = false;
    if (fields.size() == 1 && fields[0].empty()) {
      // csv yields an empty row, which pip's installer cannot unpack.
      return Error{
          fmt::format("RECORD line {} is blank (pip cannot install a wheel whose "
                      "RECORD has a blank line)",
                      row_line)};
    }
    {
      if (fields.size() != 3) {
        return Error{fmt::format("RECORD line {} has {} fields, expected 3 (path,hash,size)",
                                 row_line, fields.size())};
      }
      rows.push_back({fields[0], fields[1], fields[2], row_line});
    }
    fields.clear();
    row_line = line;
    return std::nullopt;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++line;
      if (auto error = end_row()) return *error;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted) return Error{fmt::format("RECORD line {} has an unterminated quote", row_line)};
  if (!field.empty() || !fields.empty()) {
    if (auto error = end_row()) return *error;
  }
  return rows;
}

namespace {

// The fields whose value may go on over several lines (core metadata: free text). Any other
// field folded over lines is refused: its value would hold a line break that one reader keeps
// and another drops.
bool may_fold(std::string_view key) {
  return iequals(key, "Description") || iequals(key, "License");
}

// A header name as Python's email parser (email.feedparser's headerRE) takes one: printable
// ASCII other than ':' and space, then ':' at once.
bool is_header_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x21 && u <= 0x7e && u != ':';
  });
}

// A truncated, printable quote of a line for an error message.
std::string quoted_line(std::string_view line) {
  std::string out;
  for (const char c : line.substr(0, 60)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  return line.size() > 60 ? out + "..." : out;
}

}  // namespace

Expected<Headers> Headers::parse(std::string_view text) {
  // Python's email parser (as pip and importlib.metadata read METADATA and WHEEL) ends a line at
  // "\r\n", "\r" or "\n"; a line that is not a header, a continuation or empty silently ends
  // the headers there (everything after it becomes the body). This reader takes the same lines
  // and refuses each place where that silent end, a lone CR or a folded value would make two
  // readers see different fields.
  if (!text::is_valid_utf8(text)) {
    return Error{"not UTF-8 text (pip decodes metadata as UTF-8 and fails)"};
  }
  Headers headers;
  int line_number = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    ++line_number;
    const std::size_t eol = text.find_first_of("\r\n", at);
    const std::string_view line =
        text.substr(at, eol == std::string_view::npos ? std::string_view::npos : eol - at);
    if (eol == std::string_view::npos) {
      at = text.size();
    } else if (text[eol] == '\r') {
      if (eol + 1 >= text.size() || text[eol + 1] != '\n') {
        return Error{fmt::format(
            "line {} holds a carriage return not followed by a line feed: Python's email "
            "parser starts a new line there, other readers do not",
            line_number)};
      }
      at = eol + 2;
    } else {
      at = eol + 1;
    }
    if (line.empty()) break;  // the body (a long description) follows
    if (line[0] == ' ' || line[0] == '\t') {
      if (headers.items_.empty()) {
        return Error{fmt::format("line {} continues a header that does not exist", line_number)};
      }
      auto& [key, value] = headers.items_.back();
      if (!may_fold(key)) {
        return Error{fmt::format(
            "line {} continues the '{}' field on a second line; only Description and License "
            "may span lines (readers disagree on the line break)",
            line_number, key)};
      }
      value += "\n" + std::string(line);
      continue;
    }
    const std::size_t colon = line.find(':');
    const std::string_view name =
        line.substr(0, colon == std::string_view::npos ? line.size() : colon);
    if (colon == std::string_view::npos || !is_header_name(name)) {
      return Error{fmt::format(
          "line {} is not a 'Name: value' header Python's email parser reads ('{}'): it would "
          "end the headers there and hide every field after it",
          line_number, quoted_line(line))};
    }
    // Python keeps the value from the first character that is not a space or tab.
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    // ... and keeps the rest as it is, trailing white space included (pip compares "Name:
    // sageattention\t" as it stands, and refuses it).
    headers.items_.emplace_back(std::string(name), std::string(value));
  }
  return headers;
}

std::vector<std::string> Headers::all(std::string_view key) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : items_) {
    if (iequals(k, key)) out.push_back(v);
  }
  return out;
}

std::optional<std::string> Headers::first(std::string_view key) const {
  for (const auto& [k, v] : items_) {
    if (iequals(k, key)) return v;
  }
  return std::nullopt;
}

Expected<std::string> read_dist_info_member(const std::filesystem::path& wheel,
                                            std::string_view member) {
  auto name = parse_wheel_filename(wheel.filename().string());
  if (!name) return name.error();
  auto archive = ZipArchive::open(wheel);
  if (!archive) return archive.error();
  const std::string wanted = name->dist_info_dir() + std::string(member);
  for (const ZipEntry& e : archive->entries()) {
    if (e.name != wanted) continue;
    auto stream = archive->open_stream();
    std::vector<std::uint8_t> data, scratch;
    if (auto error = archive->read(stream, e, data, scratch)) return Error{error->message};
    return std::string(data.begin(), data.end());
  }
  return Error{fmt::format("{} has no {}", wheel.filename().string(), wanted)};
}

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

bool is_identifier_path(std::string_view dotted) {
  if (dotted.empty()) return false;
  for (const std::string& part : text::split(dotted, '.')) {
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0]))) return false;
    for (const char c : part) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
  }
  return true;
}

// "module.sub:attr.attr": what pip's script template imports and calls.
bool is_object_reference(std::string_view value) {
  const std::size_t colon = value.find(':');
  if (colon == std::string_view::npos) return false;
  return is_identifier_path(value.substr(0, colon)) && is_identifier_path(value.substr(colon + 1));
}

}  // namespace

Expected<std::vector<EntryPoint>> parse_entry_points(std::string_view text) {
  auto error = [](int line, std::string_view why) {
    return Error{fmt::format("entry_points.txt line {}: {}", line, why)};
  };
  // The bytes first: importlib.metadata splits with str.splitlines(), which also ends lines at
  // \v \f \x1c-\x1e \x85 \u2028 \u2029 and a lone \r; configparser and pkg_resources do not.
  // Only printable ASCII, tab and \n (or \r\n) line ends leave the three readers one text.
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
    } else if (c == '\r') {
      if (i + 1 >= text.size() || text[i + 1] != '\n') {
        return error(line,
                     "a carriage return that does not end a line (readers split it "
                     "differently)");
      }
    } else if (c != '\t' && (c < 0x20 || c > 0x7e)) {
      return error(line, fmt::format("byte 0x{:02x}: only printable ASCII is read alike by "
                                     "importlib.metadata, pkg_resources and configparser",
                                     c));
    }
  }
  std::vector<EntryPoint> entries;
  std::vector<std::string> groups;
  std::string group;
  line = 0;
  for (std::string raw : text::split(text, '\n')) {
    ++line;
    if (raw.ends_with('\r')) raw.pop_back();
    const std::string_view stripped = text::trim(raw);
    if (stripped.empty() || stripped.starts_with('#')) continue;
    if (stripped.starts_with(';')) {
      return error(line, "a ';' line (a comment to configparser, an entry to importlib.metadata)");
    }
    if (stripped.starts_with('[')) {
      const std::string_view name =
          stripped.size() >= 2 && stripped.starts_with('[') && stripped.ends_with(']')
              ? stripped.substr(1, stripped.size() - 2)
              : std::string_view{};
      if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) {
        return error(line, fmt::format("'{}' is not a group header '[name]' (readers strip "
                                       "brackets differently)",
                                       stripped));
      }
      group = name;
      if (std::find(groups.begin(), groups.end(), group) != groups.end()) {
        return error(line, fmt::format("group [{}] again (readers keep one or the other)", group));
      }
      groups.push_back(group);
      continue;
    }
    if (group.empty()) return error(line, "an entry before any [group]");
    const std::size_t equals = stripped.find('=');
    if (equals == std::string_view::npos) return error(line, "no '=' (expected 'name = object')");
    EntryPoint entry{group, std::string(text::trim(stripped.substr(0, equals))),
                     std::string(text::trim(stripped.substr(equals + 1))), line};
    if (entry.name.empty() || !std::all_of(entry.name.begin(), entry.name.end(), is_name_char)) {
      return error(line, fmt::format("'{}' is not an entry point name (letters, digits, '.', "
                                     "'_' and '-')",
                                     entry.name));
    }
    if (entry.value.empty()) return error(line, fmt::format("'{}' names no object", entry.name));
    const bool script = group == "console_scripts" || group == "gui_scripts";
    if (script && !is_object_reference(entry.value)) {
      return error(
          line, fmt::format("'{}' is not 'module:function', what pip's script calls", entry.value));
    }
    for (const EntryPoint& seen : entries) {
      if (seen.group == entry.group && seen.name == entry.name) {
        return error(line, fmt::format("'{}' again in [{}] (line {}): readers keep one or the "
                                       "other",
                                       entry.name, group, seen.line));
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace sagebuild::wheel
