// matrix.yaml, as every command reads it: parse and validate, render each diagnostic against
// the text, and expand every profile of a file that validates.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "matrix/diagnostics.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sagebuild;
  using namespace sagebuild::matrix;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  LoadResult loaded = load_matrix(text, "matrix.yaml");
  for (const Diagnostic& d : loaded.diagnostics) {
    (void)format_headline(d);
    (void)render(d, text);
  }
  if (loaded.matrix) {
    for (const Profile& profile : loaded.matrix->profiles) {
      (void)expand_profile(*loaded.matrix, profile.name, ExpandOptions{"1.0", "all"});
    }
  }
  return 0;
}
