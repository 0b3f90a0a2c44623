// Reads what verification needs from a Windows PE image (a .pyd or .dll) held in memory: the
// machine, the DLLs its import table names, and the CUDA fat binaries of its .nv_fatb section
// (section names are cut to 8 characters in PE). Every offset is bounds-checked.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/expected.h"
#include "wheel/elf.h"

namespace sagebuild::wheel {

struct PeInfo {
  std::uint16_t machine = 0;  // IMAGE_FILE_MACHINE_AMD64 = 0x8664
  std::vector<std::string> imports;
  std::vector<FatbinImage> fatbin;
};

bool looks_like_pe(std::span<const std::uint8_t> file);
Expected<PeInfo> read_pe(std::span<const std::uint8_t> file);

}  // namespace sagebuild::wheel
