// The ZIP reader: the end records, the central directory, the members' layout, and every entry
// read (local header, data descriptor, inflate, CRC) within small limits. It reads a path, so
// each input is written to one file per process first, removed when the process exits.
#include "wheel/zip_archive.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace {
struct InputFile {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("sagebuild-fuzz-" + std::to_string(getpid()) + ".zip");
  ~InputFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sagebuild::wheel;
  static const InputFile input;  // libFuzzer ends with exit(), which runs its destructor
  const std::filesystem::path& path = input.path;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ZipLimits limits;
  limits.max_entries = 1000;
  limits.max_entry_size = 16u << 20;
  limits.max_total_size = 64u << 20;
  auto archive = ZipArchive::open(path, limits);
  if (!archive) return 0;
  auto stream = archive->open_stream();
  std::vector<std::uint8_t> out, scratch;
  for (const ZipEntry& e : archive->entries()) {
    if (!e.is_directory()) (void)archive->read(stream, e, out, scratch);
  }
  return 0;
}
