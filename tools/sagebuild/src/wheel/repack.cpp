#include "wheel/repack.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "util/sha256.h"
#include "util/text.h"
#include "wheel/dist_info.h"
#include "wheel/filename.h"
#include "wheel/naming.h"
#include "wheel/pep440.h"
#include "wheel/zip_archive.h"
#include "wheel/zip_writer.h"

namespace sagebuild::wheel {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::uint8_t> bytes(std::string_view s) {
  return {s.begin(), s.end()};
}

// WHEEL with its Build line set to `build` (replaced, or added after the Tag lines) and, when
// `tags` is given, its Tag lines replaced by that one.
std::string with_wheel_lines(std::string_view wheel_file, const std::string& build,
                             const std::optional<WheelTags>& tags) {
  std::string out;
  bool build_written = false, tag_written = false;
  for (const std::string& raw : text::split(wheel_file, '\n')) {
    const std::string_view line = text::trim(raw);
    if (line.empty()) continue;
    const std::string key = text::ascii_lower(line.substr(0, line.find(':') + 1));
    if (key == "build:") {
      if (!build_written) out += "Build: " + build + "\n";
      build_written = true;
      continue;
    }
    if (key == "tag:" && tags) {
      if (!tag_written) out += "Tag: " + tags->str() + "\n";
      tag_written = true;
      continue;
    }
    out += std::string(line) + "\n";
  }
  if (tags && !tag_written) out += "Tag: " + tags->str() + "\n";
  if (!build_written) out += "Build: " + build + "\n";
  return out;
}

// METADATA with its Version header replaced (headers end at the first empty line).
std::string with_version(std::string_view metadata, const std::string& version) {
  std::string out;
  bool in_headers = true;
  std::size_t at = 0;
  while (at < metadata.size()) {
    std::size_t end = metadata.find('\n', at);
    end = end == std::string_view::npos ? metadata.size() : end + 1;
    const std::string_view line = metadata.substr(at, end - at);
    if (in_headers && text::trim(line).empty()) in_headers = false;
    if (in_headers && text::ascii_lower(line.substr(0, 8)) == "version:") {
      out += "Version: " + version + "\n";
    } else {
      out += line;
    }
    at = end;
  }
  return out;
}

// The input's RECORD as {path: (hash, size)}: readable, and listing no path twice.
Expected<std::map<std::string, std::pair<std::string, std::string>>> vouched_by_record(
    const ZipArchive& archive, std::ifstream& stream, const std::string& record_path) {
  const auto it = std::find_if(archive.entries().begin(), archive.entries().end(),
                               [&](const ZipEntry& e) { return e.name == record_path; });
  if (it == archive.entries().end()) return Error{record_path + " is missing"};
  std::vector<std::uint8_t> data, scratch;
  if (auto error = archive.read(stream, *it, data, scratch)) {
    return Error{fmt::format("{}: {}", record_path, error->message)};
  }
  auto rows = parse_record(std::string(data.begin(), data.end()));
  if (!rows) return rows.error();
  std::map<std::string, std::pair<std::string, std::string>> vouched;
  for (const RecordRow& row : *rows) {
    if (!vouched.emplace(row.path, std::pair{row.hash, row.size}).second) {
      return Error{fmt::format("RECORD lists {} twice", row.path)};
    }
  }
  return vouched;
}

}  // namespace

std::string record_line(const std::string& path, const std::string& hash, const std::string& size) {
  return csv_field(path) + "," + hash + "," + size + "\n";
}

bool executable_content(const std::vector<std::uint8_t>& data) {
  auto starts_with = [&](std::string_view magic) {
    return data.size() >= magic.size() && std::equal(magic.begin(), magic.end(), data.begin());
  };
  return starts_with(
             "\x7f"
             "ELF") ||
         starts_with("MZ") || starts_with("#!");
}

Expected<std::filesystem::path> repack_wheel(const RepackRequest& r) {
  auto name = parse_wheel_filename(r.input.filename().string());
  if (!name) return name.error();
  auto archive = ZipArchive::open(r.input);
  if (!archive) return archive.error();
  const std::string escaped = escape_distribution_name(name->name_part);
  const std::string dist_info = name->dist_info_dir();
  const std::string data_dir = escaped + "-" + name->version_text + ".data/";
  std::string version = name->version_text;
  if (!r.version.empty()) {
    const auto parsed = parse_pep440(r.version);
    if (!parsed) return Error{fmt::format("'{}' is not a PEP 440 version", r.version)};
    version = parsed->normalized;
  }
  const std::string new_dist_info = escaped + "-" + version + ".dist-info/";
  const std::string new_data_dir = escaped + "-" + version + ".data/";
  auto renamed = [&](const std::string& entry) {
    if (entry.starts_with(dist_info)) return new_dist_info + entry.substr(dist_info.size());
    if (entry.starts_with(data_dir)) return new_data_dir + entry.substr(data_dir.size());
    return entry;
  };

  std::vector<ZipWriteEntry> package, metadata;
  bool saw_wheel = false;
  auto stream = archive->open_stream();
  std::vector<std::uint8_t> data, scratch;
  std::map<std::string, std::pair<std::string, std::string>> vouched;  // path -> hash, size
  if (r.require_record_match) {
    auto record = vouched_by_record(*archive, stream, dist_info + "RECORD");
    if (!record) {
      return Error{fmt::format("{}: {}", r.input.filename().string(), record.error().message)};
    }
    vouched = std::move(*record);
  }
  for (const ZipEntry& e : archive->entries()) {
    if (e.is_directory()) continue;
    if (auto error = archive->read(stream, e, data, scratch)) {
      return Error{fmt::format("{}: {}: {}", r.input.filename().string(), e.name, error->message)};
    }
    if (r.require_record_match && e.name != dist_info + "RECORD") {
      const auto it = vouched.find(e.name);
      if (it == vouched.end() || it->second.first != "sha256=" + base64url_nopad(sha256(data)) ||
          it->second.second != std::to_string(data.size())) {
        return Error{
            fmt::format("{}: {} is not what its RECORD vouches for; not repacked (run "
                        "`sagebuild verify-wheel` on it)",
                        r.input.filename().string(), e.name)};
      }
    }
    if (e.name == dist_info + "RECORD" || e.name == dist_info + std::string(kProvenanceFile) ||
        (!r.variant_label.empty() && e.name == dist_info + "variant.json"))
      continue;
    // The mode follows the content, not the backend's archive: a binding installed from the
    // cache as a file and one compiled and installed as a target must give the same wheel.
    ZipWriteEntry out{renamed(e.name), data, executable_content(data)};
    if (e.name == dist_info + "WHEEL") {
      out.data =
          bytes(with_wheel_lines(std::string(data.begin(), data.end()), r.build_tag, r.tags));
      saw_wheel = true;
    } else if (e.name == dist_info + "METADATA" && version != name->version_text) {
      out.data = bytes(with_version(std::string(data.begin(), data.end()), version));
    }
    (e.name.starts_with(dist_info) ? metadata : package).push_back(std::move(out));
  }
  if (!saw_wheel)
    return Error{fmt::format("{} has no {}WHEEL", r.input.filename().string(), dist_info)};
  metadata.push_back({new_dist_info + std::string(kProvenanceFile),
                      bytes(r.provenance.to_json().dump(2) + "\n"), false});
  if (!r.variant_label.empty())
    metadata.push_back({new_dist_info + "variant.json", bytes(r.variant_json), false});
  auto by_name = [](const ZipWriteEntry& a, const ZipWriteEntry& b) { return a.name < b.name; };
  std::sort(package.begin(), package.end(), by_name);
  std::sort(metadata.begin(), metadata.end(), by_name);

  std::vector<ZipWriteEntry> all = std::move(package);
  all.insert(all.end(), metadata.begin(), metadata.end());
  std::string record;
  for (const ZipWriteEntry& e : all) {
    record += record_line(e.name, "sha256=" + base64url_nopad(sha256(e.data)),
                          std::to_string(e.data.size()));
  }
  record += record_line(new_dist_info + "RECORD", "", "");
  all.push_back({new_dist_info + "RECORD", bytes(record), false});

  // A normalized PEP 440 version has no '-', so it goes into the file name as it is.
  const std::string new_name = fmt::format("{}-{}-{}-{}{}.whl", name->name_part, version,
                                           r.build_tag, r.tags ? r.tags->str() : name->tag_text,
                                           r.variant_label.empty() ? "" : "-" + r.variant_label);
  const std::filesystem::path target = r.output_dir / new_name;
  const std::filesystem::path temp = r.output_dir / ("." + new_name + ".partial");
  if (auto written = write_zip(temp, all, r.source_date_epoch); !written) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return written.error();
  }
  std::error_code ec;
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    return Error{fmt::format("cannot move {} into place: {}", new_name, ec.message())};
  }
  return target;
}

}  // namespace sagebuild::wheel
