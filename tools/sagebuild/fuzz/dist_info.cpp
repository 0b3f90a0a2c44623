// The text members of a wheel's .dist-info: RECORD (CSV), METADATA/WHEEL (headers as Python's
// email parser reads them), the PEP 508 requirements of Requires-Dist and entry_points.txt.
#include "wheel/dist_info.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wheel/requirement.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sagebuild::wheel;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)parse_record(text);
  (void)parse_entry_points(text);
  (void)requirement_error(text);
  if (auto headers = Headers::parse(text)) {
    for (const std::string& requirement : headers->all("Requires-Dist"))
      (void)requirement_error(requirement);
    (void)headers->first("Wheel-Version");
  }
  return 0;
}
