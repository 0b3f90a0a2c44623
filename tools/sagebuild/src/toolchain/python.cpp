#include "toolchain/python.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "platform/process.h"

namespace sagebuild::toolchain {

namespace stdfs = std::filesystem;

stdfs::path expand_home(std::string_view path) {
  if (path.starts_with("~/")) {
    if (const char* home = std::getenv("HOME"); home && *home) {
      return stdfs::path(home) / path.substr(2);
    }
  }
  return stdfs::path(path);
}

std::optional<std::string> python_version(const stdfs::path& python) {
  auto r = platform::run_process(
      {python.string(), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"},
      {.timeout = std::chrono::seconds(60)});
  if (!r || !r->ok()) return std::nullopt;
  return r->last_line();
}

Expected<stdfs::path> find_python(std::string_view version, const matrix::Toolchains& configured) {
  for (const auto& [v, path] : configured.python) {
    if (v.str() != version) continue;
    const stdfs::path python = expand_home(path.value);
    const auto reported = python_version(python);
    if (!reported) {
      return Error{
          fmt::format("{}: toolchains.python '{}' is {}, which does not run",
                      fmt::format("matrix.yaml:{}:{}", path.location.line, path.location.column),
                      version, python.string())};
    }
    if (*reported != version) {
      return Error{
          fmt::format("{}: toolchains.python '{}' is {}, which is Python {}",
                      fmt::format("matrix.yaml:{}:{}", path.location.line, path.location.column),
                      version, python.string(), *reported)};
    }
    return python;
  }
  // pyenv's installations first: its shims on PATH only run the version that is active.
  const char* root_env = std::getenv("PYENV_ROOT");
  const char* home = std::getenv("HOME");
  const stdfs::path root =
      root_env ? stdfs::path(root_env) : (home ? stdfs::path(home) / ".pyenv" : stdfs::path());
  std::error_code ec;
  std::vector<std::pair<std::vector<int>, stdfs::path>> candidates;
  if (!root.empty() && stdfs::is_directory(root / "versions", ec)) {
    for (const auto& dir : stdfs::directory_iterator(root / "versions", ec)) {
      const std::string name = dir.path().filename().string();
      const auto python = dir.path() / "bin" / fmt::format("python{}", version);
      if (!name.starts_with(std::string(version) + ".") || !stdfs::exists(python, ec)) continue;
      // Newest patch release: 3.12.10 after 3.12.9 (numerically, not as text).
      std::vector<int> parts;
      for (std::size_t at = 0; at <= name.size();) {
        const std::size_t dot = std::min(name.find('.', at), name.size());
        parts.push_back(std::atoi(name.substr(at, dot - at).c_str()));
        at = dot + 1;
      }
      candidates.emplace_back(std::move(parts), python);
    }
  }
  if (!candidates.empty()) {
    return std::max_element(candidates.begin(), candidates.end())->second;
  }
  auto on_path = platform::find_in_path(fmt::format("python{}", version));
  if (on_path && on_path->parent_path().filename() != "shims") return *on_path;
  return Error{fmt::format(
      "no Python {0} here: looked in matrix.yaml toolchains.python, pyenv ({1}/versions/{0}.*) "
      "and PATH (python{0}); install it (`pyenv install {0}`, `uv python install {0}`, or the "
      "system's python{0} package) or name it under toolchains.python in matrix.yaml",
      version, root.empty() ? "~/.pyenv" : root.string())};
}

}  // namespace sagebuild::toolchain
