// Reads what verification needs from an ELF shared object held in memory: the machine, the
// DT_NEEDED libraries, the symbol versions it requires (GLIBC_2.28, GLIBCXX_3.4.29, ...) and the
// CUDA fat binaries it embeds. Every offset is bounds-checked: a hostile file gives an error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace sagebuild::wheel {

// One cubin (SASS) or PTX image inside a fat binary.
struct FatbinImage {
  enum class Kind { sass, ptx } kind;
  int arch = 0;              // 90 for sm_90
  std::string suffix;        // "a" (arch-specific, sm_90a) or "f" (family), else ""
  std::string name() const;  // "sm_90a", "compute_90" for PTX
};

// An undefined dynamic symbol and the version it asks for ("" when unversioned).
struct SymbolNeed {
  std::string symbol;   // "pthread_create"
  std::string library;  // "libc.so.6", from the version's Verneed record
  std::string version;  // "GLIBC_2.34"
};

struct ElfInfo {
  std::uint16_t machine = 0;              // EM_X86_64 = 62, EM_AARCH64 = 183
  std::vector<std::string> needed;        // DT_NEEDED, in order
  std::vector<std::string> search_paths;  // DT_RPATH and DT_RUNPATH elements ("$ORIGIN/../x")
  std::vector<std::pair<std::string, std::string>>
      version_needs;                  // (library, "GLIBC_2.28"), each once
  std::vector<SymbolNeed> undefined;  // .dynsym, in order
  std::vector<FatbinImage> fatbin;    // from .nv_fatbin, in order
};

// The work of reading one file in all: records visited (dynamic entries, version needs, symbols,
// fat binary images) and bytes of names read. Records of one region can be reached many times
// (chains that share their tails), so the file's size alone does not bound the work; these do,
// at several times what torch's largest library needs.
struct ElfLimits {
  std::uint64_t records = 4'000'000;
  std::uint64_t string_bytes = 256ull << 20;
};

Expected<ElfInfo> read_elf(std::span<const std::uint8_t> file, const ElfLimits& limits = {});

// Parses the .nv_fatbin section contents (a sequence of fat binary containers).
Expected<std::vector<FatbinImage>> parse_fatbin(std::span<const std::uint8_t> section);

// "9.0a" -> {90, "a"}; "12.0+PTX" -> {120, ""}; nothing when malformed.
std::optional<std::pair<int, std::string>> arch_number(std::string_view torch_arch);

}  // namespace sagebuild::wheel
