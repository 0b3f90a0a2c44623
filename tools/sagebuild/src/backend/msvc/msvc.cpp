#include "backend/msvc/msvc.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/text.h"

namespace sagebuild::backend {

std::vector<std::string> vswhere_command(std::string_view program_files_x86) {
  return {std::string(program_files_x86) + "\\Microsoft Visual Studio\\Installer\\vswhere.exe",
          "-latest",
          "-products",
          "*",
          "-requires",
          "Microsoft.VisualStudio.Component.VC.Tools.x86.x64",
          "-format",
          "json",
          "-utf8"};
}

Expected<std::vector<VisualStudio>> parse_vswhere(std::string_view text) {
  std::vector<VisualStudio> found;
  try {
    const auto j = nlohmann::json::parse(text);
    if (!j.is_array()) return Error{"vswhere printed no list of installations"};
    for (const auto& item : j) {
      VisualStudio vs{item.value("installationPath", ""), item.value("installationVersion", ""),
                      item.value("displayName", "")};
      if (!vs.path.empty()) found.push_back(std::move(vs));
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("cannot read vswhere's output: {}", e.what())};
  }
  auto parts = [](const std::string& v) {
    std::vector<int> out;
    for (const std::string& p : text::split(v, '.'))
      out.push_back(std::atoi(p.c_str()));
    return out;
  };
  std::stable_sort(found.begin(), found.end(), [&](const VisualStudio& a, const VisualStudio& b) {
    return parts(a.version) > parts(b.version);
  });
  return found;
}

std::vector<std::string> vcvars_command(const VisualStudio& vs) {
  // cmd /s /c ""...\vcvars64.bat" >nul && set": /s keeps the inner quotes as they are.
  return {"cmd.exe", "/s", "/c",
          fmt::format("\"\"{}\\VC\\Auxiliary\\Build\\vcvars64.bat\" >nul && set\"", vs.path)};
}

std::vector<std::pair<std::string, std::string>> parse_set_output(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> env;
  for (std::string line : text::split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t eq = line.find('=');
    // "=C:=C:\\x" entries (per-drive directories) start with '=': not variables to pass on.
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = line.substr(0, eq);
    if (name.find(' ') != std::string::npos) continue;  // a banner line with an '=' in it
    env.emplace_back(name, line.substr(eq + 1));
  }
  return env;
}

std::optional<int> msc_ver_from_environment(
    const std::vector<std::pair<std::string, std::string>>& environment) {
  for (const auto& [name, value] : environment) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    if (upper != "VCTOOLSVERSION") continue;
    const auto parts = text::split(value, '.');
    if (parts.size() < 2) return std::nullopt;
    // Toolset 14.XY is _MSC_VER 19XY (14.42 -> 1942; VS 2026's 14.50 -> 1950).
    const int major = std::atoi(parts[0].c_str()), minor = std::atoi(parts[1].c_str());
    if (major != 14) return std::nullopt;
    return 1900 + minor;
  }
  return std::nullopt;
}

std::pair<int, int> msvc_range(const Version& cuda) {
  // The ranges nvcc's crt/host_config.h accepts: 12.0-12.3 end before VS 2022 17.10 (_MSC_VER
  // 1940); 12.4 and later accept all of VS 2022 (up to 1949); 13.x drops VS 2017 (1910-1919).
  if (cuda.major() >= 13) return {1920, 1949};
  if (cuda.major() == 12 && cuda.minor() >= 4) return {1910, 1949};
  return {1910, 1939};
}

std::optional<std::string> check_msvc_compatibility(const Version& cuda, int msc_ver) {
  const auto [low, high] = msvc_range(cuda);
  if (msc_ver >= low && msc_ver <= high) return std::nullopt;
  return fmt::format(
      "MSVC {} (_MSC_VER {}) is not one nvcc {} accepts ({} to {}): install a Visual Studio "
      "toolset in that range (vcvars64.bat -vcvars_ver=14.XY picks one), or a CUDA release that "
      "supports this one",
      fmt::format("14.{}", msc_ver - 1900), msc_ver, cuda.str(), low, high);
}

void describe_msvc(const std::vector<MsvcEntryPlan>& entries, Log& log) {
  for (const MsvcEntryPlan& e : entries) {
    const auto [low, high] = msvc_range(e.cuda);
    log.result("{}\n  wheel        {}\n  backend      msvc (on a Windows runner)\n", e.id, e.wheel);
    log.result("  find VS      {}\n", text::join(vswhere_command("%ProgramFiles(x86)%"), " "));
    log.result("  environment  {}\n",
               text::join(vcvars_command({"<installationPath>", "", ""}), " "));
    log.result(
        "  check        nvcc {} accepts _MSC_VER {} to {} (VCToolsVersion 14.{} to "
        "14.{})\n",
        e.cuda.str(), low, high, low - 1900, high - 1900);
    log.result("  command      {}\n    CMAKE_GENERATOR=Ninja\n\n",
               text::join(e.build_command, " "));
  }
}

}  // namespace sagebuild::backend
