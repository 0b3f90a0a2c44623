#include "wheel/zip_writer.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <libdeflate.h>
#include <memory>
#include <system_error>

#include <fmt/format.h>

namespace sagebuild::wheel {
namespace {

void u16(std::string& s, unsigned v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}
void u32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    s += static_cast<char>((v >> (8 * i)) & 0xff);
}

// MS-DOS date and time fields of a UTC instant (ZIP stores local time without a zone; wheels
// built anywhere should carry the same bytes, so UTC is used).
std::pair<unsigned, unsigned> dos_time(std::int64_t epoch) {
  using namespace std::chrono;
  const sys_seconds t{seconds{std::max<std::int64_t>(epoch, 315532800)}};
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss clock{t - day};
  const unsigned date = static_cast<unsigned>(((static_cast<int>(ymd.year()) - 1980) << 9) |
                                              (static_cast<unsigned>(ymd.month()) << 5) |
                                              static_cast<unsigned>(ymd.day()));
  const unsigned time =
      static_cast<unsigned>((clock.hours().count() << 11) | (clock.minutes().count() << 5) |
                            (clock.seconds().count() / 2));
  return {date, time};
}

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

}  // namespace

std::int64_t source_date_epoch() {
  const char* value = std::getenv("SOURCE_DATE_EPOCH");
  if (value && *value) {
    char* end = nullptr;
    const long long parsed = std::strtoll(value, &end, 10);
    if (end && *end == '\0' && parsed >= 0) return parsed;
  }
  return 315532800;
}

Expected<Ok> write_zip(const std::filesystem::path& path, const std::vector<ZipWriteEntry>& entries,
                       std::int64_t epoch) {
  std::unique_ptr<libdeflate_compressor, CompressorDeleter> compressor(
      libdeflate_alloc_compressor(6));
  if (!compressor) return Error{"cannot allocate a deflate compressor"};
  const auto [date, time] = dos_time(epoch);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{fmt::format("cannot create {}", path.string())};
  std::string central;
  std::uint64_t offset = 0;
  std::vector<std::uint8_t> packed;
  for (const ZipWriteEntry& e : entries) {
    const std::uint32_t crc = libdeflate_crc32(0, e.data.data(), e.data.size());
    packed.resize(libdeflate_deflate_compress_bound(compressor.get(), e.data.size()));
    std::size_t size = libdeflate_deflate_compress(compressor.get(), e.data.data(), e.data.size(),
                                                   packed.data(), packed.size());
    // Stored when deflate would not help (tiny or incompressible entries).
    const bool stored = size == 0 || size >= e.data.size();
    const std::uint8_t* body = stored ? e.data.data() : packed.data();
    if (stored) size = e.data.size();
    if (offset + size + 1024 > 0xffffffffull || e.data.size() > 0xffffffffull) {
      return Error{"archive over 4 GiB: ZIP64 output is not supported"};
    }
    std::string local;
    u32(local, 0x04034b50);
    u16(local, 20), u16(local, 0x0800), u16(local, stored ? 0 : 8), u16(local, time),
        u16(local, date);
    u32(local, crc), u32(local, static_cast<std::uint32_t>(size)),
        u32(local, static_cast<std::uint32_t>(e.data.size()));
    u16(local, static_cast<unsigned>(e.name.size())), u16(local, 0);
    local += e.name;
    out.write(local.data(), static_cast<std::streamsize>(local.size()));
    out.write(reinterpret_cast<const char*>(body), static_cast<std::streamsize>(size));

    u32(central, 0x02014b50);
    u16(central, 0x031e), u16(central, 20), u16(central, 0x0800), u16(central, stored ? 0 : 8);
    u16(central, time), u16(central, date);
    u32(central, crc), u32(central, static_cast<std::uint32_t>(size)),
        u32(central, static_cast<std::uint32_t>(e.data.size()));
    u16(central, static_cast<unsigned>(e.name.size())), u16(central, 0), u16(central, 0),
        u16(central, 0), u16(central, 0);
    u32(central, (e.executable ? 0100755u : 0100644u) << 16);
    u32(central, static_cast<std::uint32_t>(offset));
    central += e.name;
    offset += local.size() + size;
  }
  std::string end;
  u32(end, 0x06054b50);
  u16(end, 0), u16(end, 0);
  u16(end, static_cast<unsigned>(entries.size())), u16(end, static_cast<unsigned>(entries.size()));
  u32(end, static_cast<std::uint32_t>(central.size())),
      u32(end, static_cast<std::uint32_t>(offset)), u16(end, 0);
  out.write(central.data(), static_cast<std::streamsize>(central.size()));
  out.write(end.data(), static_cast<std::streamsize>(end.size()));
  out.flush();
  if (!out) {
    // The stream keeps no reason; the last system call's errno is it (ENOSPC on a full disk).
    const int error = errno;
    return Error{fmt::format("cannot write {}: {}", path.string(),
                             error ? std::generic_category().message(error) : "write failed")};
  }
  return Ok{};
}

}  // namespace sagebuild::wheel
