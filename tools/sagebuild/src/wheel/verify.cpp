#include "wheel/verify.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "util/sha256.h"
#include "wheel/linux_policy.h"
#include "wheel/naming.h"
#include "wheel/verifier.h"

namespace sagebuild::wheel {

void Verifier::run() {
  for (const CheckInfo& check : check_catalog()) {
    if (is_selected(check.id, options_)) report_.checks_run.emplace_back(check.id);
  }
  check_filename();
  auto archive = ZipArchive::open(path_, options_.limits);
  if (!archive) {
    fail("A001", "", archive.error().message);
    return;
  }
  report_.entries = archive->entries().size();
  check_entry_names(*archive);
  read_entries(*archive);
  check_dist_info(*archive);
  check_build_tag();
  check_expected();
  check_binaries(*archive);
  check_import();
}

void Verifier::fail(std::string_view id, std::string where, std::string message) {
  if (!is_selected(id, options_)) return;
  if (report_.findings.size() >= kMaxFindings) {
    ++report_.findings_not_listed;
    return;
  }
  for (std::string* text : {&where, &message}) {
    if (text->size() > kMaxFindingText) {
      const std::size_t cut = text->size() - kMaxFindingText;
      text->resize(kMaxFindingText);
      *text += fmt::format("... ({} characters cut)", cut);
    }
  }
  report_.findings.push_back({std::string(id), std::move(where), std::move(message)});
}

// ---- read every entry once, in parallel: CRC, sizes, hash, and binaries parsed in place ----
void Verifier::read_entries(const ZipArchive& archive) {
  const auto& entries = archive.entries();
  // Only the .dist-info files a check reads are kept as text: a wheel of thousands of large
  // .dist-info members costs one member's memory at a time, not all of them.
  std::set<std::string> text_members;
  if (name_) {
    const std::string dir = name_->dist_info_dir();
    for (const std::string_view member :
         {std::string_view("RECORD"), std::string_view("WHEEL"), std::string_view("METADATA"),
          std::string_view("entry_points.txt"), kProvenanceFile}) {
      text_members.insert(dir + std::string(member));
    }
  }
  results_.resize(entries.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> inflated{0};
  auto worker = [&] {
    std::ifstream stream = archive.open_stream();
    std::vector<std::uint8_t> data, scratch;
    for (std::size_t i = next++; i < entries.size(); i = next++) {
      const ZipEntry& e = entries[i];
      EntryReading& r = results_[i];
      if (e.is_directory()) {
        if (e.size != 0) {
          r.error = ZipError{ZipErrorKind::structure,
                             fmt::format("a directory entry carrying {} bytes of data", e.size)};
        }
        continue;
      }
      r.error = archive.read(stream, e, data, scratch);
      if (r.error) continue;
      inflated += data.size();
      r.size = data.size();
      r.digest = base64url_nopad(sha256(data));
      if (text_members.contains(e.name) && data.size() < (16u << 20)) {
        r.text = std::string(data.begin(), data.end());
      }
      if (is_binary_name(e.name)) {
        r.binary = true;
        if (looks_like_pe(data)) {
          r.pe = read_pe(data);
        } else {
          r.elf = read_elf(data);
        }
      }
    }
  };
  unsigned threads = options_.threads ? options_.threads : std::thread::hardware_concurrency();
  threads = std::clamp<unsigned>(threads, 1, 16);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (auto& t : pool)
    t.join();
  report_.inflated = inflated;

  std::size_t listed_name_bytes = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& error = results_[i].error;
    if (!error && !entries[i].is_directory()) {
      listed_name_bytes += entries[i].name.size();
      if (listed_name_bytes <= kMaxListedNameBytes) {
        report_.files.push_back({entries[i].name, results_[i].size, results_[i].digest});
      } else {
        ++report_.files_not_listed;
      }
    }
    if (!error) continue;
    const char* id = error->kind == ZipErrorKind::crc           ? "A006"
                     : error->kind == ZipErrorKind::size_bounds ? "A007"
                     : error->kind == ZipErrorKind::unsupported ? "A003"
                                                                : "A001";
    fail(id, entries[i].name, error->message);
  }
}

const EntryReading* Verifier::find(const ZipArchive& archive, const std::string& name) const {
  for (std::size_t i = 0; i < archive.entries().size(); ++i) {
    if (archive.entries()[i].name == name) return &results_[i];
  }
  return nullptr;
}

std::optional<Headers> Verifier::headers(const ZipArchive& archive, const std::string& file,
                                         std::string_view id) {
  const EntryReading* r = find(archive, file);
  if (!r || r->error) {
    fail(id, file, r ? "unreadable" : "missing");
    return std::nullopt;
  }
  if (!r->text) {
    fail(id, file, "too large to be a metadata file");
    return std::nullopt;
  }
  auto parsed = Headers::parse(*r->text);
  if (!parsed) {
    fail(id, file, parsed.error().message);
    return std::nullopt;
  }
  return *parsed;
}

WheelReport verify_wheel(const std::filesystem::path& path, const VerifyOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  WheelReport report;
  report.path = path.string();
  report.file_name = path.filename().string();
  std::error_code ec;
  report.file_size = std::filesystem::file_size(path, ec);
  Verifier(path, options, report).run();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace sagebuild::wheel
