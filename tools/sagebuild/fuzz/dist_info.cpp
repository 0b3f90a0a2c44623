// The text members of a wheel's .dist-info: RECORD (CSV) and METADATA/WHEEL (RFC 822 headers).
#include "wheel/dist_info.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sagebuild::wheel;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)parse_record(text);
  if (auto headers = Headers::parse(text)) {
    (void)headers->all("Requires-Dist");
    (void)headers->first("Wheel-Version");
  }
  return 0;
}
