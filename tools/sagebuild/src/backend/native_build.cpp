#include "backend/native_build.h"

#include <chrono>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/build_steps.h"
#include "backend/wheel_finish.h"
#include "matrix/expand.h"
#include "platform/process.h"
#include "toolchain/cuda.h"
#include "util/fs.h"
#include "util/text.h"
#include "wheel/naming.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;
struct Environment {
  Version python, torch, cuda;  // cuda: nvcc's major.minor
  std::string cuda_full;        // nvcc's release, e.g. 13.0.88
  std::string torch_cuda;       // torch.version.cuda
  stdfs::path nvcc;
};

std::optional<stdfs::path> find_nvcc() {
  if (auto p = platform::find_in_path("nvcc")) return p;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(var); home && *home) {
      const stdfs::path candidate = stdfs::path(home) / "bin" / "nvcc";
      if (stdfs::exists(candidate)) return candidate;
    }
  }
  if (stdfs::exists("/usr/local/cuda/bin/nvcc")) return stdfs::path("/usr/local/cuda/bin/nvcc");
  return std::nullopt;
}

Expected<Environment> probe(const stdfs::path& python) {
  Environment env;
  auto py = platform::run_process(
      {python.string(), "-c",
       "import sys; print('%d.%d' % sys.version_info[:2]); import torch; "
       "print(torch.__version__.split('+')[0]); print(torch.version.cuda or '')"},
      {.timeout = std::chrono::minutes(2)});
  if (!py) return Error{py.error().message};
  const auto lines = text::split(text::trim(py->output), '\n');
  if (!py->ok() || lines.size() < 3) {
    return Error{
        fmt::format("{} cannot import torch ({}); install the torch to build against "
                    "into that environment, or pass --python",
                    python.string(), py->last_line())};
  }
  auto pv = Version::parse(text::trim(lines[0]));
  auto tv = Version::parse(text::trim(lines[1]));
  if (!pv || !tv) return Error{fmt::format("cannot read the versions {} reports", python.string())};
  env.python = *pv;
  env.torch = *tv;
  env.torch_cuda = std::string(text::trim(lines[2]));
  if (env.torch_cuda.empty()) {
    return Error{fmt::format("{}'s torch {} is a CPU-only build; a CUDA build of torch is needed",
                             python.string(), env.torch.str())};
  }
  const auto nvcc = find_nvcc();
  if (!nvcc) {
    return Error{"no CUDA toolkit: nvcc is not in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin"};
  }
  env.nvcc = *nvcc;
  auto toolkit = toolchain::inspect_toolkit(nvcc->parent_path().parent_path());
  if (!toolkit) return Error{fmt::format("cannot read the version of {}", nvcc->string())};
  env.cuda = toolkit->release;
  env.cuda_full = toolkit->version;
  const auto torch_cuda = Version::parse(env.torch_cuda);
  if (!torch_cuda || torch_cuda->major() != env.cuda.major()) {
    return Error{
        fmt::format("nvcc {} ({}) does not match torch {}'s CUDA {}: the CUDA major versions "
                    "must agree; put the matching toolkit's bin/ first in PATH",
                    env.cuda_full, nvcc->string(), env.torch.str(), env.torch_cuda)};
  }
  return env;
}

// The archs for this environment: the matrix entry that describes it, else the toolkit's or the
// default list that this CUDA can target.
std::vector<std::string> archs_for(const matrix::Matrix& m, const Environment& env,
                                   std::string* id) {
  for (const auto& profile : m.profiles) {
    auto entries = matrix::expand_profile(m, profile.name, {"0", "linux"});
    if (!entries) continue;
    for (const auto& e : *entries) {
      if (e.torch == env.torch && e.cuda == env.cuda && e.python == env.python) {
        *id = e.id;
        return e.archs;
      }
    }
  }
  std::vector<std::string> archs;
  for (const auto& a : m.default_archs) {
    const matrix::ArchSpec* spec = m.find_arch(a.value);
    if (spec && spec->cuda.allows(env.cuda)) archs.push_back(a.value);
  }
  return archs;
}

}  // namespace

Expected<BuildResult> build_current(const matrix::Matrix& m, const CurrentBuildOptions& options,
                                    std::ostream& out) {
  CurrentBuildOptions o = options;
  // A relative interpreter path means "from here"; the build itself runs in the root.
  if (o.python.has_parent_path() && o.python.is_relative()) o.python = stdfs::absolute(o.python);
  auto env = probe(o.python);
  if (!env) return env.error();
  std::string id = "current";
  const std::vector<std::string> declared = archs_for(m, *env, &id);
  std::vector<std::string> archs = declared;
  if (!o.arch_list.empty()) {
    archs = text::split(o.arch_list, ';');
  } else if (const char* list = std::getenv("TORCH_CUDA_ARCH_LIST"); list && *list) {
    archs = text::split(list, ';');
  }
  if (archs.empty()) return Error{"no CUDA architecture to build for (matrix.yaml default_archs)"};
  if (id != "current" && declared != archs) {
    // The wheel will carry the entry's name but not its architectures: verify-wheel checks
    // wheels against matrix.yaml by name, so it will (rightly) fail it there.
    out << fmt::format(
        "sagebuild: warning: building {} for {} instead of its matrix.yaml archs {}; "
        "verify-wheel against matrix.yaml will report the missing ones (B004)\n",
        id, text::join(archs, ";"), text::join(declared, ";"));
  }
  const std::string tag = wheel::build_tag(env->torch, env->cuda);
  const std::string arch_list = text::join(archs, ";");
  out << fmt::format("sagebuild: building {} for Python {}, torch {}, CUDA {} ({}), archs {}\n", id,
                     env->python.str(), env->torch.str(), env->cuda_full, env->nvcc.string(),
                     arch_list);

  // The reproducibility run builds in another directory, so that a build path leaking into
  // the binaries shows up as a difference.
  const stdfs::path work =
      o.root / "build" / "sagebuild" / (o.reproducibility_run ? id + "-again" : id);
  const stdfs::path logs = o.root / "build" / "logs";
  std::error_code ec;
  stdfs::remove_all(work, ec);
  stdfs::create_directories(work / "backend", ec);
  stdfs::create_directories(work / "out", ec);
  stdfs::create_directories(logs, ec);
  const stdfs::path dist = o.dist.is_absolute() ? o.dist : o.root / o.dist;
  stdfs::create_directories(dist, ec);
  BuildResult result;
  result.log = logs / (id + (o.reproducibility_run ? "-again" : "") + ".log");
  stdfs::remove(result.log, ec);
  // build/results/<entry>.json, whatever the outcome: what `sagebuild summary` reports.
  const auto start = Clock::now();
  nlohmann::ordered_json record = {{"entry", id},
                                   {"status", "build_failed"},
                                   {"python", env->python.str()},
                                   {"torch", env->torch.str()},
                                   {"cuda", env->cuda_full},
                                   {"platform", "linux_x86_64"},
                                   {"archs", archs},
                                   {"log", result.log.string()}};
  auto save = [&](const std::string& status, const std::string& message) {
    if (o.reproducibility_run) return;
    record["status"] = status;
    if (!message.empty()) record["message"] = message;
    record["seconds"] = seconds_since(start);
    stdfs::create_directories(o.root / "build" / "results", ec);
    (void)fs::write_file_atomic(o.root / "build" / "results" / (id + ".json"),
                                record.dump(2) + "\n");
  };

  // 1. The package's own build command (matrix.yaml package.build_command).
  const std::vector<std::string> argv = build_command_argv(m, o.root, o.python, work / "backend");
  if (argv.empty()) return Error{"matrix.yaml has no package.build_command"};
  const char* path = std::getenv("PATH");
  auto built = platform::run_process(
      argv, {.working_directory = o.root,
             .environment = {{"TORCH_CUDA_ARCH_LIST", arch_list},
                             {"SOURCE_DATE_EPOCH", std::to_string(o.source_date_epoch)},
                             {"PATH", env->nvcc.parent_path().string() + ":" + (path ? path : "")},
                             {"CUDACXX", env->nvcc.string()}},
             .keep_output = 4096,
             .log_file = result.log});
  if (!built || !built->ok()) {
    result.message = fmt::format("the build of {} failed ({}); log: {}\n{}", id,
                                 built ? built->describe() : built.error().message,
                                 result.log.string(), built ? built->output : "");
    save("build_failed", result.message);
    return result;
  }
  const double build_seconds = seconds_since(start);
  stdfs::path produced;
  for (const auto& f : stdfs::directory_iterator(work / "backend")) {
    if (f.path().extension() == ".whl") produced = f.path();
  }
  if (produced.empty()) {
    result.message =
        fmt::format("the build of {} produced no wheel in {}", id, (work / "backend").string());
    save("build_failed", result.message);
    return result;
  }

  // 2. Name by the convention and record provenance.
  wheel::Provenance p;
  p.sagebuild_version = SAGEBUILD_VERSION;
  if (o.git) {
    p.commit = o.git->commit;
    p.dirty = o.git->dirty;
  }
  p.entry = id == "current" ? "" : id;
  p.package = m.package.name;
  p.version = o.package_version;
  p.torch = env->torch.str();
  p.cuda = env->cuda_full;
  p.python = env->python.str();
  p.platform_tag = "linux_x86_64";
  p.archs = archs;
  // The settings this build passed that change the binaries (the compiler flags themselves are
  // fixed by the sources' CMake files, which the commit pins).
  p.flags = {"TORCH_CUDA_ARCH_LIST=" + arch_list,
             "SOURCE_DATE_EPOCH=" + std::to_string(o.source_date_epoch)};
  for (const char* var : {"SKBUILD_CMAKE_DEFINE", "SKBUILD_CMAKE_ARGS", "CMAKE_ARGS"}) {
    if (const char* v = std::getenv(var); v && *v) p.flags.push_back(std::string(var) + "=" + v);
  }
  WheelToFinish finish{produced,
                       work / "out",
                       dist,
                       tag,
                       o.package_version,
                       o.source_date_epoch,
                       p,
                       {id, "", env->torch, env->cuda, env->python, "linux_x86_64", archs}};
  const FinishedWheel finished = finish_wheel(finish, out);
  if (finished.outcome == FinishedWheel::Outcome::verification_failed) {
    result.outcome = BuildOutcome::verification_failed;
    result.message = finished.message;
    record["wheel"] = finished.wheel.filename().string();
    save("verification_failed", finished.findings);
    return result;
  }
  if (finished.outcome != FinishedWheel::Outcome::moved) {
    result.message = finished.message;
    save("build_failed", result.message);
    return result;
  }
  result.wheel = finished.wheel;
  result.outcome = BuildOutcome::built;
  record["wheel"] = result.wheel.filename().string();
  record["sha256"] = finished.sha256;
  record["size"] = finished.size;
  record["checks"] = finished.checks;
  record["build_seconds"] = build_seconds;
  save("built", "");
  out << fmt::format("sagebuild: built {} ({:.1f} MB) in {:.0f} s\n", result.wheel.string(),
                     static_cast<double>(finished.size) / 1e6, seconds_since(start));
  return result;
}

}  // namespace sagebuild::backend
