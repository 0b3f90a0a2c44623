// A read-only ZIP reader made for verification: it reports the archive's raw structure (every
// central directory record, duplicates included) and reads one entry at a time, checking the
// local header against the central record, the declared sizes, the compression ratio and the
// CRC, without writing anything to disk. Memory: one entry (compressed + inflated) per reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"

namespace sagebuild::wheel {

struct ZipLimits {
  std::uint64_t max_entries = 100'000;
  std::uint64_t max_entry_size = 4ull << 30;   // inflated bytes of one entry
  std::uint64_t max_total_size = 32ull << 30;  // inflated bytes of the whole archive
  std::uint64_t max_ratio = 1000;              // inflated / compressed, for entries > 1 MiB
};

struct ZipEntry {
  std::string name;
  std::uint16_t made_by = 0;         // high byte: 3 = Unix (external attributes hold st_mode)
  std::uint16_t version_needed = 0;  // low byte: ZIP version x 10 needed to extract
  std::uint16_t flags = 0;
  std::uint16_t method = 0;  // 0 stored, 8 deflate
  std::uint32_t crc32 = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint64_t local_header_offset = 0;
  std::uint32_t external_attributes = 0;

  bool is_directory() const { return name.ends_with('/'); }
  // The Unix mode (file type and permission bits) in the high half of the external attributes.
  // Read whatever system `made_by` names: pip does (a symlink's S_IFLNK under a "FAT" made_by is
  // still a symlink to it).
  std::uint32_t unix_mode() const { return external_attributes >> 16; }
};

// Why reading an entry failed; verify-wheel maps each kind to its own check.
enum class ZipErrorKind { structure, crc, size_bounds, unsupported };

struct ZipError {
  ZipErrorKind kind;
  std::string message;
};

class ZipArchive {
 public:
  // Reads the end records and the central directory. Fails only when the archive cannot be
  // read as a ZIP at all.
  static Expected<ZipArchive> open(const std::filesystem::path& path, const ZipLimits& limits = {});

  const std::vector<ZipEntry>& entries() const { return entries_; }
  std::uint64_t file_size() const { return file_size_; }
  const std::filesystem::path& path() const { return path_; }

  // A stream for read(); one per thread.
  std::ifstream open_stream() const { return std::ifstream(path_, std::ios::binary); }

  // Reads and inflates `entry` into `out`, reusing `scratch` for the compressed bytes.
  // Returns nothing on success, the first problem otherwise.
  std::optional<ZipError> read(std::ifstream& stream, const ZipEntry& entry,
                               std::vector<std::uint8_t>& out,
                               std::vector<std::uint8_t>& scratch) const;

 private:
  std::filesystem::path path_;
  std::uint64_t file_size_ = 0;
  ZipLimits limits_;
  std::vector<ZipEntry> entries_;
};

}  // namespace sagebuild::wheel
