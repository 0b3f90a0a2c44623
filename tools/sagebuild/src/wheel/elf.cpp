#include "wheel/elf.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "util/byte_view.h"

namespace sagebuild::wheel {
namespace {

constexpr std::uint32_t kSectionDynamic = 6;
constexpr std::uint32_t kSectionNobits = 8;
constexpr std::uint32_t kSectionDynsym = 11;
constexpr std::uint32_t kSectionVerneed = 0x6ffffffe;
constexpr std::uint32_t kSectionVersym = 0x6fffffff;
// More dynamic symbols than any real extension has (torch's largest library has ~300k): a bound
// on the work a hostile file can ask for.
constexpr std::uint64_t kMaxDynamicSymbols = 4'000'000;

constexpr std::int64_t kDtNeeded = 1;
constexpr std::int64_t kDtRpath = 15;
constexpr std::int64_t kDtRunpath = 29;
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
// Fat binary image flags (observed with nvcc 13.0 and cross-checked against cuobjdump).
constexpr std::uint64_t kFatbinArchSpecific = 0x100000;       // sm_90a
constexpr std::uint64_t kFatbinFamily = 0x200000;             // sm_100f
constexpr std::uint64_t kFatbinCompressed = 0x2000 | 0x8000;  // LZ4 (older nvcc), zstd (13.0)

// Why an image's payload cannot be what it says, or nothing: a compressed image states both of
// its sizes; an uncompressed SASS image is a cubin (an ELF whose section table it holds
// whole), since the driver loads nothing else; PTX is text, of some length.
std::optional<std::string> image_payload_error(const ByteView& b, std::uint64_t entry,
                                               std::uint64_t header, std::uint64_t payload,
                                               bool sass, std::uint64_t flags) {
  if (payload == 0) return "an empty image";
  if (flags & kFatbinCompressed) {
    const std::uint64_t compressed = b.get<std::uint32_t>(entry + 16).value_or(0);
    const std::uint64_t inflated = b.get<std::uint64_t>(entry + 56).value_or(0);
    if (compressed == 0 || compressed > payload || inflated == 0) {
      return fmt::format(
          "a compressed image of {} bytes that states {} compressed and {} "
          "inflated bytes",
          payload, compressed, inflated);
    }
    return std::nullopt;
  }
  if (!sass) return std::nullopt;
  const std::uint64_t at = entry + header;
  if (payload < 64 || b.get<std::uint32_t>(at).value_or(0) != 0x464c457f) {
    return fmt::format("SASS of {} bytes that is not a cubin (no ELF header): truncated?", payload);
  }
  const std::uint64_t shoff = b.get<std::uint64_t>(at + 0x28).value_or(0);
  const std::uint64_t shentsize = b.get<std::uint16_t>(at + 0x3A).value_or(0);
  const std::uint64_t shnum = b.get<std::uint16_t>(at + 0x3C).value_or(0);
  if (shnum != 0 && (shoff > payload || shentsize * shnum > payload - shoff)) {
    return fmt::format("a cubin of {} bytes whose section table ends past it: truncated", payload);
  }
  return std::nullopt;
}

struct Section {
  std::uint32_t name, type, link;
  std::uint64_t offset, size;
  std::string label;
};

// What is left of ElfLimits while a file is read.
struct Budget {
  explicit Budget(const ElfLimits& given)
      : limits(given), records(given.records), string_bytes(given.string_bytes) {}
  const ElfLimits& limits;
  std::uint64_t records;
  std::uint64_t string_bytes;
  // Spends one record; false once none is left.
  bool record() { return records == 0 ? false : (--records, true); }
  bool strings(std::size_t bytes) {
    if (bytes + 1 > string_bytes) return false;
    string_bytes -= bytes + 1;
    return true;
  }
  Error exceeded() const {
    return Error{fmt::format(
        "more than {} records or {} MiB of names in all: sections or chains that repeat one "
        "region (a real library needs a fraction of that)",
        limits.records, limits.string_bytes >> 20)};
  }
};

}  // namespace

std::string FatbinImage::name() const {
  return fmt::format("{}_{}{}", kind == Kind::sass ? "sm" : "compute", arch, suffix);
}

std::optional<std::pair<int, std::string>> arch_number(std::string_view arch) {
  if (arch.ends_with("+PTX")) arch.remove_suffix(4);
  std::string suffix;
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) {
    suffix = std::string(1, arch.back());
    arch.remove_suffix(1);
  }
  const std::size_t dot = arch.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 2 != arch.size()) return std::nullopt;
  int major = 0;
  for (const char c : arch.substr(0, dot)) {
    if (c < '0' || c > '9') return std::nullopt;
    major = major * 10 + (c - '0');
  }
  const char minor = arch[dot + 1];
  if (minor < '0' || minor > '9') return std::nullopt;
  return std::pair{major * 10 + (minor - '0'), suffix};
}

Expected<std::vector<FatbinImage>> parse_fatbin(std::span<const std::uint8_t> section) {
  const ByteView b(section);
  std::vector<FatbinImage> images;
  std::uint64_t pos = 0;
  while (pos + 16 <= b.size()) {
    if (b.get<std::uint32_t>(pos).value_or(0) != kFatbinMagic) {
      // Containers are 8-byte aligned; trailing padding is zeros.
      if (b.get<std::uint64_t>(pos).value_or(0) == 0) {
        pos += 8;
        continue;
      }
      return Error{fmt::format("fat binary container at offset {} has a bad magic number", pos)};
    }
    const std::uint16_t header_size = b.get<std::uint16_t>(pos + 6).value_or(0);
    const std::uint64_t body_size = b.get<std::uint64_t>(pos + 8).value_or(0);
    if (header_size < 16 || !b.has(pos + header_size, body_size)) {
      return Error{fmt::format("fat binary container at offset {} overruns the section", pos)};
    }
    std::uint64_t entry = pos + header_size;
    const std::uint64_t end = entry + body_size;
    while (entry + 64 <= end) {
      const std::uint16_t kind = b.get<std::uint16_t>(entry).value_or(0);
      const std::uint32_t entry_header = b.get<std::uint32_t>(entry + 4).value_or(0);
      const std::uint64_t payload = b.get<std::uint64_t>(entry + 8).value_or(0);
      if (entry_header < 64 || entry_header > end - entry || payload > end - entry - entry_header) {
        return Error{fmt::format("fat binary image at offset {} overruns its container", entry)};
      }
      if (kind == 1 || kind == 2) {
        const std::uint64_t flags = b.get<std::uint64_t>(entry + 40).value_or(0);
        if (auto why = image_payload_error(b, entry, entry_header, payload, kind == 2, flags)) {
          return Error{fmt::format("fat binary image at offset {}: {}", entry, *why)};
        }
        FatbinImage image{kind == 2 ? FatbinImage::Kind::sass : FatbinImage::Kind::ptx,
                          static_cast<int>(b.get<std::uint32_t>(entry + 28).value_or(0)), ""};
        if (flags & kFatbinArchSpecific) image.suffix = "a";
        if (flags & kFatbinFamily) image.suffix = "f";
        images.push_back(image);
      }
      entry += entry_header + payload;
    }
    pos = end;
  }
  return images;
}

namespace {

// One file's reading: its sections, what is left of the limits, what was found so far. Each
// step returns why the file is refused, or nothing.
class ElfReader {
 public:
  ElfReader(std::span<const std::uint8_t> file, const ElfLimits& limits)
      : b_(file), budget_(limits) {}

  ElfInfo& info() { return info_; }

  // The section header table, each section inside the file, and their names. False: no table
  // (nothing more to read).
  Expected<bool> read_sections() {
    info_.machine = b_.get<std::uint16_t>(0x12).value_or(0);
    const std::uint64_t shoff = b_.get<std::uint64_t>(0x28).value_or(0);
    const std::uint16_t shentsize = b_.get<std::uint16_t>(0x3A).value_or(0);
    const std::uint16_t shnum = b_.get<std::uint16_t>(0x3C).value_or(0);
    const std::uint16_t shstrndx = b_.get<std::uint16_t>(0x3E).value_or(0);
    if (shnum == 0) return false;
    if (shentsize < 64 || !b_.has(shoff, std::uint64_t{shentsize} * shnum)) {
      return Error{"the section header table lies outside the file"};
    }
    for (std::uint16_t i = 0; i < shnum; ++i) {
      const std::uint64_t at = shoff + std::uint64_t{i} * shentsize;
      Section s{
          b_.get<std::uint32_t>(at).value_or(0),      b_.get<std::uint32_t>(at + 4).value_or(0),
          b_.get<std::uint32_t>(at + 40).value_or(0), b_.get<std::uint64_t>(at + 24).value_or(0),
          b_.get<std::uint64_t>(at + 32).value_or(0), ""};
      // A NOBITS section (.bss) takes no room in the file, so only where it starts is checked;
      // its contents are never read (see .nv_fatbin below).
      const bool outside =
          s.type == kSectionNobits ? s.offset > b_.size() : !b_.has(s.offset, s.size);
      if (outside) return Error{fmt::format("section {} lies outside the file", i)};
      sections_.push_back(s);
    }
    if (shstrndx < sections_.size()) {
      const Section& names = sections_[shstrndx];
      for (Section& s : sections_) {
        s.label = b_.c_string(names.offset + s.name, names.offset + names.size).value_or("");
      }
    }
    return true;
  }

  // The dynamic linker reads one of each of these; a second is a file made to be read twice.
  std::optional<Error> check_unique_sections() const {
    for (const std::uint32_t type :
         {kSectionDynamic, kSectionDynsym, kSectionVerneed, kSectionVersym}) {
      if (std::count_if(sections_.begin(), sections_.end(),
                        [&](const Section& s) { return s.type == type; }) > 1) {
        return Error{fmt::format("more than one section of type 0x{:x}", type)};
      }
    }
    if (std::count_if(sections_.begin(), sections_.end(),
                      [](const Section& s) { return s.label == ".nv_fatbin"; }) > 1) {
      return Error{"more than one .nv_fatbin section"};
    }
    return std::nullopt;
  }

  // The dynamic section, the version needs and the CUDA fat binary, in the sections' order.
  std::optional<Error> read_contents() {
    for (const Section& s : sections_) {
      std::optional<Error> problem;
      if (s.type == kSectionDynamic) {
        problem = read_dynamic(s);
      } else if (s.type == kSectionVerneed) {
        problem = read_version_needs(s);
      } else if (s.label == ".nv_fatbin") {
        problem = read_fatbin(s);
      }
      if (problem) return problem;
    }
    return std::nullopt;
  }

  // The undefined dynamic symbols (Elf64_Sym: 24 bytes), each with the version .gnu.version
  // gives it (a u16 per symbol: 0 local, 1 global unversioned, else a Vernaux index).
  std::optional<Error> read_undefined_symbols() {
    const Section* versym = nullptr;
    for (const Section& s : sections_) {
      if (s.type == kSectionVersym) versym = &s;
    }
    for (const Section& s : sections_) {
      if (s.type != kSectionDynsym) continue;
      const std::uint64_t count = s.size / 24;
      if (count > kMaxDynamicSymbols) return Error{fmt::format("{} dynamic symbols", count)};
      for (std::uint64_t i = 1; i < count; ++i) {
        const std::uint64_t at = s.offset + i * 24;
        if (!budget_.record()) return budget_.exceeded();
        if (b_.get<std::uint16_t>(at + 6).value_or(1) != 0) continue;  // defined here
        auto name = string_at(s.link, b_.get<std::uint32_t>(at).value_or(0));
        if (exhausted_) return budget_.exceeded();
        if (!name) return Error{"a dynamic symbol's name lies outside its string table"};
        SymbolNeed need{*name, "", ""};
        if (versym && versym->size >= (i + 1) * 2) {
          const auto index = static_cast<std::uint16_t>(
              b_.get<std::uint16_t>(versym->offset + i * 2).value_or(0) & 0x7fff);
          if (const auto found = version_index_.find(index); found != version_index_.end()) {
            need.library = found->second.first;
            need.version = found->second.second;
          }
        }
        info_.undefined.push_back(std::move(need));
      }
    }
    return std::nullopt;
  }

 private:
  // A name from string table section `table`, charged to the budget (exhausted_ once spent).
  std::optional<std::string> string_at(std::uint32_t table, std::uint64_t offset) {
    if (table >= sections_.size()) return std::nullopt;
    const Section& t = sections_[table];
    auto text = b_.c_string(t.offset + offset, t.offset + t.size);
    if (text && !budget_.strings(text->size())) {
      exhausted_ = true;
      return std::nullopt;
    }
    return text;
  }

  // DT_NEEDED libraries and the DT_RPATH / DT_RUNPATH search paths.
  std::optional<Error> read_dynamic(const Section& s) {
    for (std::uint64_t at = s.offset; at + 16 <= s.offset + s.size; at += 16) {
      if (!budget_.record()) return budget_.exceeded();
      const auto tag = b_.get<std::int64_t>(at).value_or(0);
      if (tag == 0) break;
      if (tag == kDtNeeded) {
        auto name = string_at(s.link, b_.get<std::uint64_t>(at + 8).value_or(0));
        if (exhausted_) return budget_.exceeded();
        if (!name) return Error{"a DT_NEEDED entry points outside its string table"};
        info_.needed.push_back(*name);
      } else if (tag == kDtRpath || tag == kDtRunpath) {
        auto paths = string_at(s.link, b_.get<std::uint64_t>(at + 8).value_or(0));
        if (exhausted_) return budget_.exceeded();
        if (!paths) return Error{"a DT_RPATH or DT_RUNPATH entry points outside its string table"};
        // A list separated by ':'; an empty element means the current directory.
        for (std::size_t start = 0;;) {
          const std::size_t colon = paths->find(':', start);
          info_.search_paths.push_back(paths->substr(start, colon - start));
          if (colon == std::string::npos) break;
          start = colon + 1;
        }
      }
    }
    return std::nullopt;
  }

  // Elf64_Verneed records, each with a chain of Elf64_Vernaux records: the (library, version)
  // pairs needed, and the version index (vna_other) of each for the symbols.
  std::optional<Error> read_version_needs(const Section& s) {
    std::uint64_t need = s.offset;
    for (int guard = 0; guard < 4096 && need + 16 <= s.offset + s.size; ++guard) {
      if (!budget_.record()) return budget_.exceeded();
      const auto count = b_.get<std::uint16_t>(need + 2).value_or(0);
      auto library = string_at(s.link, b_.get<std::uint32_t>(need + 4).value_or(0));
      if (exhausted_) return budget_.exceeded();
      std::uint64_t aux = need + b_.get<std::uint32_t>(need + 8).value_or(0);
      for (int k = 0; k < count && aux + 16 <= s.offset + s.size; ++k) {
        if (!budget_.record()) return budget_.exceeded();
        auto version = string_at(s.link, b_.get<std::uint32_t>(aux + 8).value_or(0));
        if (exhausted_) return budget_.exceeded();
        if (library && version) {
          if (seen_needs_.emplace(*library, *version).second) {
            info_.version_needs.emplace_back(*library, *version);
          }
          // The last record of an index wins, as the linear search before it did.
          version_index_[static_cast<std::uint16_t>(b_.get<std::uint16_t>(aux + 6).value_or(0) &
                                                    0x7fff)] = {*library, *version};
        }
        const auto next = b_.get<std::uint32_t>(aux + 12).value_or(0);
        if (next == 0) break;
        aux += next;
      }
      const auto next = b_.get<std::uint32_t>(need + 12).value_or(0);
      if (next == 0) break;
      need += next;
    }
    return std::nullopt;
  }

  // The CUDA fat binary's images, each one record of the budget.
  std::optional<Error> read_fatbin(const Section& s) {
    if (s.type == kSectionNobits) return Error{".nv_fatbin has no contents in the file (NOBITS)"};
    auto images = parse_fatbin(b_.slice(s.offset, s.size));
    if (!images) return images.error();
    if (images->size() > budget_.records) return budget_.exceeded();
    budget_.records -= images->size();
    info_.fatbin.insert(info_.fatbin.end(), images->begin(), images->end());
    return std::nullopt;
  }

  const ByteView b_;
  Budget budget_;
  bool exhausted_ = false;
  std::vector<Section> sections_;
  ElfInfo info_;
  // Version index (vna_other) -> (library, version), from the Verneed records.
  std::unordered_map<std::uint16_t, std::pair<std::string, std::string>> version_index_;
  std::set<std::pair<std::string, std::string>> seen_needs_;
};

}  // namespace

Expected<ElfInfo> read_elf(std::span<const std::uint8_t> file, const ElfLimits& limits) {
  if (file.size() < 64 || std::memcmp(file.data(),
                                      "\x7f"
                                      "ELF",
                                      4) != 0) {
    return Error{"not an ELF file"};
  }
  if (file[4] != 2 || file[5] != 1) {
    return Error{"not a 64-bit little-endian ELF file"};
  }
  ElfReader reader(file, limits);
  auto has_sections = reader.read_sections();
  if (!has_sections) return has_sections.error();
  if (!*has_sections) return std::move(reader.info());  // no section table: nothing more to read
  if (auto problem = reader.check_unique_sections()) return *problem;
  if (auto problem = reader.read_contents()) return *problem;
  if (auto problem = reader.read_undefined_symbols()) return *problem;
  return std::move(reader.info());
}

}  // namespace sagebuild::wheel
