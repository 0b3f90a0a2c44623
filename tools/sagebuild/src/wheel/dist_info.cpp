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
    if (!(fields.size() == 1 && fields[0].empty())) {  // blank lines are skipped, as csv does
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

Expected<Headers> Headers::parse(std::string_view text) {
  Headers headers;
  int line_number = 0;
  for (const std::string& raw : text::split(text, '\n')) {
    ++line_number;
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the body (a long description) follows
    if (line[0] == ' ' || line[0] == '\t') {
      if (headers.items_.empty()) {
        return Error{fmt::format("line {} continues a header that does not exist", line_number)};
      }
      headers.items_.back().second += "\n" + std::string(text::trim(line));
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Error{fmt::format("line {} is not a 'Key: value' header: '{}'", line_number, line)};
    }
    headers.items_.emplace_back(std::string(line.substr(0, colon)),
                                std::string(text::trim(line.substr(colon + 1))));
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
  const std::string wanted = escape_distribution_name(name->name_part) + "-" + name->version_text +
                             ".dist-info/" + std::string(member);
  for (const ZipEntry& e : archive->entries()) {
    if (e.name != wanted) continue;
    auto stream = archive->open_stream();
    std::vector<std::uint8_t> data, scratch;
    if (auto error = archive->read(stream, e, data, scratch)) return Error{error->message};
    return std::string(data.begin(), data.end());
  }
  return Error{fmt::format("{} has no {}", wheel.filename().string(), wanted)};
}

}  // namespace sagebuild::wheel
