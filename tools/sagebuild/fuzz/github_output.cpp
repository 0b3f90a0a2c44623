// What sagebuild writes for GitHub Actions: $GITHUB_OUTPUT records (a name, a value, and the
// heredoc delimiter that must never occur in the value) read back as written, and workflow
// command escaping.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/terminal.h"
#include "github/output.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sagebuild;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = text.find('\n');
  const std::string_view name = text.substr(0, cut == std::string_view::npos ? 0 : cut);
  const std::string_view value = cut == std::string_view::npos ? text : text.substr(cut + 1);
  if (auto record = github::format_output(name, value)) {
    auto parsed = github::parse_output_file(*record);
    // A record that was written must read back as exactly this one output.
    if (!parsed || parsed->size() != 1 || parsed->begin()->first != name ||
        parsed->begin()->second != value) {
      std::abort();
    }
  }
  (void)github::parse_output_file(text);
  const std::string annotation = cli::error_annotation(name, 1, 1, value);
  if (annotation.find('\n') != std::string::npos) std::abort();  // one line, whatever the input
  return 0;
}
