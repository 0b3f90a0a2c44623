#include "wheel/pe.h"

#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "util/byte_view.h"

namespace sagebuild::wheel {
namespace {

struct Section {
  std::string name;
  std::uint32_t virtual_size, virtual_address, raw_size, raw_offset;
};

}  // namespace

bool looks_like_pe(std::span<const std::uint8_t> file) {
  return file.size() >= 0x40 && file[0] == 'M' && file[1] == 'Z';
}

Expected<PeInfo> read_pe(std::span<const std::uint8_t> file) {
  const ByteView r(file);
  if (!looks_like_pe(file)) return Error{"not a PE file"};
  const auto pe = r.get<std::uint32_t>(0x3c);
  if (!pe || !r.has(*pe, 24) || std::memcmp(file.data() + *pe, "PE\0\0", 4) != 0) {
    return Error{"no PE signature"};
  }
  PeInfo info;
  info.machine = *r.get<std::uint16_t>(*pe + 4);
  const std::uint16_t sections = *r.get<std::uint16_t>(*pe + 6);
  const std::uint16_t optional_size = *r.get<std::uint16_t>(*pe + 20);
  const std::uint64_t optional = *pe + 24;
  const auto magic = r.get<std::uint16_t>(optional);
  if (!magic || (*magic != 0x20b && *magic != 0x10b)) return Error{"unknown PE optional header"};
  const std::uint64_t directories = optional + (*magic == 0x20b ? 112 : 96);
  const std::uint64_t count_at = optional + (*magic == 0x20b ? 108 : 92);

  std::vector<Section> table;
  const std::uint64_t section_table = optional + optional_size;
  for (std::uint16_t i = 0; i < sections; ++i) {
    const std::uint64_t at = section_table + std::uint64_t{i} * 40;
    if (!r.has(at, 40)) return Error{"the section table lies outside the file"};
    char name[9] = {};
    std::memcpy(name, file.data() + at, 8);
    table.push_back({name, *r.get<std::uint32_t>(at + 8), *r.get<std::uint32_t>(at + 12),
                     *r.get<std::uint32_t>(at + 16), *r.get<std::uint32_t>(at + 20)});
  }
  auto file_offset = [&](std::uint32_t rva) -> std::optional<std::uint64_t> {
    for (const Section& s : table) {
      const std::uint32_t extent = std::max(s.virtual_size, s.raw_size);
      if (rva >= s.virtual_address && rva - s.virtual_address < extent) {
        return std::uint64_t{s.raw_offset} + (rva - s.virtual_address);
      }
    }
    return std::nullopt;
  };

  const auto count = r.get<std::uint32_t>(count_at);
  if (count && *count > 1) {
    const auto import_rva = r.get<std::uint32_t>(directories + 8);
    if (import_rva && *import_rva != 0) {
      auto at = file_offset(*import_rva);
      if (!at) return Error{"the import table lies outside every section"};
      for (int guard = 0; guard < 4096; ++guard, *at += 20) {
        if (!r.has(*at, 20)) return Error{"the import table runs past the end of the file"};
        const auto name_rva = *r.get<std::uint32_t>(*at + 12);
        if (name_rva == 0 && *r.get<std::uint32_t>(*at) == 0) break;
        auto name_at = file_offset(name_rva);
        auto name = name_at ? r.c_string(*name_at, r.size()) : std::nullopt;
        if (!name) return Error{"an import names a DLL outside the file"};
        info.imports.push_back(*name);
      }
    }
  }
  for (const Section& s : table) {
    if (s.name != ".nv_fatb") continue;
    if (!r.has(s.raw_offset, s.raw_size)) return Error{".nv_fatb lies outside the file"};
    auto images =
        parse_fatbin(r.slice(s.raw_offset, std::min(s.raw_size, std::max(s.virtual_size, 1u))));
    if (!images) return images.error();
    info.fatbin.insert(info.fatbin.end(), images->begin(), images->end());
  }
  return info;
}

}  // namespace sagebuild::wheel
