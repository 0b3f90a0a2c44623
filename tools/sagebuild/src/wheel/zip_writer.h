// Writes ZIP archives deterministically: entries in the order given, fixed timestamps
// (SOURCE_DATE_EPOCH, else 1980-01-01), fixed permissions, deflate level 6 via libdeflate. The
// counterpart of zip_archive.h, used to re-pack wheels (wheel/repack.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.h"

namespace sagebuild::wheel {

struct ZipWriteEntry {
  std::string name;
  std::vector<std::uint8_t> data;
  bool executable = false;  // 0755 instead of 0644
};

// Writes `entries` to `path` (created or replaced). Archives over 4 GiB (ZIP64) are refused.
Expected<Ok> write_zip(const std::filesystem::path& path, const std::vector<ZipWriteEntry>& entries,
                       std::int64_t source_date_epoch);

// SOURCE_DATE_EPOCH from the environment, or 315532800 (1980-01-01, the earliest ZIP date).
std::int64_t source_date_epoch();

}  // namespace sagebuild::wheel
