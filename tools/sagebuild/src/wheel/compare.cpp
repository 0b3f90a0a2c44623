#include "wheel/compare.h"

#include <map>

#include <fmt/format.h>

#include "util/sha256.h"
#include "wheel/zip_archive.h"

namespace sagebuild::wheel {

Expected<WheelComparison> compare_wheels(const std::filesystem::path& first,
                                         const std::filesystem::path& second) {
  auto a_digest = sha256_file(first);
  if (!a_digest) return a_digest.error();
  auto b_digest = sha256_file(second);
  if (!b_digest) return b_digest.error();
  WheelComparison result;
  result.identical = a_digest->digest == b_digest->digest;
  if (result.identical) return result;

  auto a = ZipArchive::open(first);
  if (!a) return a.error();
  auto b = ZipArchive::open(second);
  if (!b) return b.error();
  std::map<std::string, const ZipEntry*> in_b;
  std::vector<std::string> order_a, order_b;
  for (const ZipEntry& e : b->entries()) {
    in_b[e.name] = &e;
    order_b.push_back(e.name);
  }
  for (const ZipEntry& e : a->entries()) {
    order_a.push_back(e.name);
    const auto found = in_b.find(e.name);
    if (found == in_b.end()) {
      result.differences.push_back({e.name, "only in the first"});
      continue;
    }
    const ZipEntry& other = *found->second;
    if (e.crc32 != other.crc32 || e.size != other.size) {
      result.differences.push_back(
          {e.name, fmt::format("contents differ ({} vs {} bytes)", e.size, other.size)});
    } else if (e.external_attributes != other.external_attributes) {
      result.differences.push_back({e.name, "permissions differ"});
    } else if (e.compressed_size != other.compressed_size || e.method != other.method) {
      result.differences.push_back({e.name, "same contents, compressed differently"});
    }
    in_b.erase(found);
  }
  for (const auto& [name, entry] : in_b)
    result.differences.push_back({name, "only in the second"});
  if (result.differences.empty()) {
    result.differences.push_back(
        {"", order_a != order_b ? "entries in a different order"
                                : "same entries and contents; timestamps or headers differ"});
  }
  return result;
}

}  // namespace sagebuild::wheel
