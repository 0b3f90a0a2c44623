#include "backend/install_check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "platform/process.h"
#include "toolchain/python.h"
#include "util/fs.h"

namespace sagebuild::backend {
namespace {

using wheel::ImportOutcome;
namespace stdfs = std::filesystem;

using fs::TempDir;

// "pip 23.2.1 from ..." -> whether it has --python (added in 22.3).
bool pip_has_python_option(const std::string& version_output) {
  int major = 0, minor = 0;
  if (std::sscanf(version_output.c_str(), "pip %d.%d", &major, &minor) != 2) return false;
  return major > 22 || (major == 22 && minor >= 3);
}

ImportOutcome skipped(std::string why) {
  return {ImportOutcome::Status::skipped, std::move(why)};
}
ImportOutcome failed(std::string why) {
  return {ImportOutcome::Status::failed, std::move(why)};
}

}  // namespace

ImportOutcome run_install_check(const stdfs::path& wheel_path, const wheel::ImportRequest& request,
                                const InstallCheckOptions& options) {
  stdfs::path base = options.python;
  const bool existing_environment = !base.empty();
  if (!existing_environment) {
    // A wheel of every Python (request.python empty) is tried with this machine's python3.
    auto found = request.python.empty()
                     ? Expected<stdfs::path>(platform::find_in_path("python3").value_or(""))
                     : toolchain::find_python(request.python);
    if (!found) return skipped(found.error().message);
    if (found->empty()) return skipped("no python3 on PATH to try a wheel of every Python with");
    base = *found;
  }
  const auto version = toolchain::python_version(base);
  if (!version) return skipped(fmt::format("cannot run {}", base.string()));
  if (!request.python.empty() && *version != request.python) {
    return skipped(fmt::format("{} is Python {}, the wheel is for Python {}", base.string(),
                               *version, request.python));
  }

  TempDir dir("sagebuild-import");
  const stdfs::path venv = dir.path() / "venv";
  // Without pip (ensurepip takes seconds); the base interpreter's pip installs into it through
  // --python (pip >= 22.3), else the venv gets its own pip after all.
  auto made = platform::run_process({base.string(), "-m", "venv", "--without-pip", venv.string()},
                                    {.timeout = std::chrono::minutes(5)});
  if (made && made->cancelled) return failed("interrupted");
  if (!made || !made->ok()) {
    return skipped(fmt::format("cannot make a virtual environment with {}: {}", base.string(),
                               made ? made->last_line() : made.error().message));
  }
  const std::string python = (venv / "bin" / "python").string();
  if (existing_environment) {
    // Let the new environment see the given interpreter's packages (its torch). venv's
    // --system-site-packages would not do it when that interpreter is itself a venv: it adds the
    // base installation's site-packages, not the venv's. A .pth file names the exact paths.
    // Its site directories and what their .pth files add (sagebuild's environments reach the
    // shared CUDA runtime libraries that way), without the standard library's directories.
    const char* paths =
        "import sys, sysconfig\n"
        "p = sysconfig.get_paths(); std = (p['stdlib'], p['platstdlib'])\n"
        "for d in dict.fromkeys([p['purelib'], p['platlib']] + sys.path[1:]):\n"
        "    if d and not d.endswith('.zip') and not any(d == s or d.startswith(s + "
        "'/lib-dynload') "
        "for s in std): print(d)\n";
    auto theirs = platform::run_process({base.string(), "-c", paths});
    auto ours = platform::run_process(
        {python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
    if (!theirs || !theirs->ok() || !ours || !ours->ok()) {
      return skipped(fmt::format("cannot read the site-packages of {}", base.string()));
    }
    auto written = fs::write_file_atomic(stdfs::path(ours->last_line()) / "sagebuild-base.pth",
                                         theirs->output);
    if (!written) return skipped(written.error().message);
  }
  std::vector<std::string> pip = {base.string(), "-m", "pip", "--python", python};
  if (auto v = platform::run_process({base.string(), "-m", "pip", "--version"});
      !v || !v->ok() || !pip_has_python_option(v->output)) {
    auto ensured = platform::run_process({python, "-m", "ensurepip", "--default-pip"},
                                         {.timeout = std::chrono::minutes(5)});
    if (!ensured || !ensured->ok()) {
      return skipped(fmt::format("cannot put pip into the test environment: {}",
                                 ensured ? ensured->last_line() : ensured.error().message));
    }
    pip = {python, "-m", "pip"};
  }
  auto pip_install = [&pip](std::vector<std::string> args) {
    std::vector<std::string> argv = pip;
    argv.push_back("install");
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  const platform::ProcessOptions pip_options{
      .environment = {{"PIP_DISABLE_PIP_VERSION_CHECK", "1"}, {"PIP_NO_INPUT", "1"}},
      .timeout = options.install_timeout};

  if (existing_environment) {
    // The installed version, read without importing torch (a second and a half); whether it
    // imports is found out with the wheel's own import below.
    auto torch = platform::run_process(
        {python, "-c",
         "from importlib.metadata import version; print(version('torch').split('+')[0])"},
        pip_options);
    if (!torch || !torch->ok()) {
      return skipped(fmt::format("{} has no torch", base.string()));
    }
    // "torch==2.8.*": the environment's torch must be of that minor release; "torch>=2.10":
    // that release or a later one.
    const std::string_view pin = request.torch_requirement;
    const std::string installed = torch->last_line();
    bool fits = true;
    if (const std::size_t eq = pin.find("==");
        eq != std::string_view::npos && pin.ends_with(".*")) {
      const std::string series(pin.substr(eq + 2, pin.size() - (eq + 2) - 2));  // "2.8"
      fits = (installed + ".").starts_with(series + ".");
    } else if (const std::size_t ge = pin.find(">="); ge != std::string_view::npos) {
      const auto lowest = Version::parse(pin.substr(ge + 2));
      const auto have = Version::parse(installed);
      fits = lowest && have && !(*have < *lowest);
    }
    if (!fits) {
      return skipped(fmt::format("{} has torch {}, the wheel needs {}", base.string(), installed,
                                 request.torch_requirement));
    }
  } else if (!request.torch_requirement.empty()) {
    auto torch =
        platform::run_process(pip_install({"--quiet", request.torch_requirement}), pip_options);
    if (!torch || !torch->ok()) {
      return skipped(fmt::format("{} cannot be installed here: {}", request.torch_requirement,
                                 torch ? torch->last_line() : torch.error().message));
    }
  }
  auto install = platform::run_process(pip_install({"--quiet", "--no-deps", wheel_path.string()}),
                                       pip_options);
  if (!install || !install->ok()) {
    return failed(fmt::format("pip cannot install the wheel: {}",
                              install ? install->last_line() : install.error().message));
  }
  // Import from outside any source tree, so that the installed package is the one imported.
  // torch first: an environment whose torch does not import says nothing about the wheel
  // (exit 75: skipped); then the module.
  auto imported = platform::run_process(
      {python, "-c",
       fmt::format(
           "import sys\n"
           "try:\n    import torch\n"
           "except Exception as e:\n    print(f'torch does not import: {{e}}'); sys.exit(75)\n"
           "import {0}; print({0}.__file__)\n"
           "{1}\n",
           request.module, options.check)},
      {.working_directory = dir.path(), .timeout = std::chrono::minutes(5)});
  if (imported && imported->exit_code == 75) {
    return skipped(fmt::format("{}: {}", base.string(), imported->last_line()));
  }
  if (!imported || !imported->ok()) {
    return failed(fmt::format("import {} failed: {}", request.module,
                              imported ? imported->last_line() : imported.error().message));
  }
  return {ImportOutcome::Status::passed, imported->last_line()};
}

}  // namespace sagebuild::backend
