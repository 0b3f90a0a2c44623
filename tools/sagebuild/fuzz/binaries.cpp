// Compiled modules as verify-wheel reads them: ELF (sections, DT_NEEDED, symbol versions, the
// CUDA fat binary), PE (imports, .nv_fatb), and a fat binary on its own.
#include <cstddef>
#include <cstdint>
#include <span>

#include "wheel/elf.h"
#include "wheel/pe.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sagebuild::wheel;
  const std::span<const std::uint8_t> bytes(data, size);
  if (looks_like_pe(bytes)) {
    (void)read_pe(bytes);
  } else {
    (void)read_elf(bytes);
  }
  (void)parse_fatbin(bytes);
  return 0;
}
