// Wheel file names (PEP 427, as packaging reads them), PEP 440 versions, the dotted versions and
// constraints of matrix.yaml, and project-name canonicalization.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/version.h"
#include "wheel/filename.h"
#include "wheel/pep440.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sagebuild;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)wheel::parse_wheel_filename(text);
  if (auto v = wheel::parse_pep440(text)) (void)wheel::parse_pep440(v->normalized);
  (void)wheel::canonicalize_name(text);
  (void)Version::parse(text);
  (void)VersionConstraint::parse(text);
  return 0;
}
