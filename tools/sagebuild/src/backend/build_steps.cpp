#include "backend/build_steps.h"

#include <map>

#include "platform/process.h"

namespace sagebuild::backend {

std::vector<std::string> build_command_argv(const matrix::Matrix& m,
                                            const std::filesystem::path& root,
                                            const std::filesystem::path& python,
                                            const std::filesystem::path& wheel_dir) {
  const std::map<std::string, std::string> values = {
      {"{python}", python.string()},
      {"{wheel_dir}", wheel_dir.string()},
      {"{source_dir}", (root / m.package.source_dir).string()}};
  std::vector<std::string> argv;
  for (std::string word : m.package.build_command) {
    for (const auto& [key, value] : values) {
      for (std::size_t at = word.find(key); at != std::string::npos;
           at = word.find(key, at + value.size())) {
        word.replace(at, key.size(), value);
      }
    }
    argv.push_back(std::move(word));
  }
  return argv;
}

std::string compiler_launcher(const BuildOptions& options) {
  if (!options.compiler_launcher) return "";
  for (const char* launcher : {"ccache", "sccache"}) {
    if (platform::find_in_path(launcher)) return launcher;
  }
  return "";
}

}  // namespace sagebuild::backend
