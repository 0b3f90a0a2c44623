// The MSVC backend's Windows-specific preparation: Visual Studio found with vswhere, the
// environment of its vcvars64.bat captured (cmd /c "vcvars64.bat && set") and given to every
// build step, and the MSVC toolset checked against what the entry's nvcc accepts, before
// anything is compiled. The entry's build itself is the native flow with Ninja and the same
// CMake, producing win_amd64 wheels.
//
// Parsing and the compatibility rule are plain functions (tested on any OS); the commands are
// built here and run through platform/process.h, whose Win32 implementation runs them there.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/expected.h"
#include "util/log.h"
#include "util/version.h"

namespace sagebuild::backend {

struct VisualStudio {
  std::string path;     // installationPath
  std::string version;  // installationVersion, "17.11.35312.102"
  std::string name;     // displayName
};

// vswhere's command: the newest Visual Studio (any edition, Build Tools included) that has the
// x64 C++ tools.
std::vector<std::string> vswhere_command(std::string_view program_files_x86);

// vswhere -format json output; newest first. An error for output that is not vswhere's JSON.
Expected<std::vector<VisualStudio>> parse_vswhere(std::string_view json);

// The command that prints the environment vcvars64.bat makes.
std::vector<std::string> vcvars_command(const VisualStudio& vs);

// `set` output after vcvars64.bat: NAME=value lines (Windows names are case-insensitive;
// the case printed is kept). Lines before the first NAME=value (banners) are ignored.
std::vector<std::pair<std::string, std::string>> parse_set_output(std::string_view text);

// _MSC_VER of the toolset vcvars selected: VCToolsVersion=14.42.34433 -> 1942.
std::optional<int> msc_ver_from_environment(
    const std::vector<std::pair<std::string, std::string>>& environment);

// The _MSC_VER range nvcc of CUDA `cuda` accepts, inclusive.
std::pair<int, int> msvc_range(const Version& cuda);

// Whether nvcc of CUDA `cuda` accepts MSVC `msc_ver` (its crt/host_config.h refuses others
// unless -allow-unsupported-compiler); nullopt when it does, else the reason and the remedy.
std::optional<std::string> check_msvc_compatibility(const Version& cuda, int msc_ver);

struct MsvcEntryPlan {
  std::string id;
  std::string wheel;
  Version cuda;
  std::vector<std::string> build_command;  // package.build_command, {python} left as is
};

// --dry-run for Windows entries (on any OS): Visual Studio discovery, the vcvars environment,
// the compatibility rule, and the build with Ninja.
void describe_msvc(const std::vector<MsvcEntryPlan>& entries, Log& log);

}  // namespace sagebuild::backend
