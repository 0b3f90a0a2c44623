#include "backend/native/doctor.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "backend/native/entry_build.h"
#include "backend/native/entry_toolchain.h"
#include "platform/process.h"
#include "store/build_cache.h"
#include "util/fs.h"
#include "util/secrets.h"
#include "util/text.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;
using namespace std::chrono_literals;

// What the parts of a build take on disk, measured on the real builds (docs/build.md): an
// environment, torch's shared CUDA runtime, a provisioned toolkit, one entry's build directory.
constexpr double kEnvironmentGb = 1.5;
constexpr double kRuntimeGb = 5.0;
constexpr double kToolkitGb = 4.0;
constexpr double kEntryGb = 0.2;

// The last non-empty line a process wrote (its error, usually).
std::string last_line_of(const Expected<platform::ProcessResult>& r) {
  if (!r) return r.error().message;
  const std::string line = r->last_line();
  return line.empty() ? r->describe() : line;
}

// The host compiler nvcc uses: $CUDAHOSTCXX (CMake's, which the kernel build honours), else
// nvcc's default, g++ on PATH.
std::string host_compiler() {
  if (const char* c = std::getenv("CUDAHOSTCXX"); c && *c) return c;
  return "g++";
}

// A one-line kernel compiled and linked into a program by this toolkit's nvcc with the host
// compiler, as CMake's compiler check does: what fails first when the two do not go together
// ("unsupported GNU version! gcc versions later than 13 ...") or the toolkit's libraries are not
// where nvcc links from (cudart_static, cudadevrt).
DoctorCheck try_host_compiler(const toolchain::CudaToolkitPath& toolkit) {
  DoctorCheck check{"host-compiler",
                    fmt::format("{} with CUDA {}", host_compiler(), toolkit.release.str())};
  auto version = platform::run_process({host_compiler(), "-dumpfullversion"},
                                       {.timeout = 30s, .keep_output = 1024});
  const std::string compiler = version && version->ok()
                                   ? fmt::format("{} {}", host_compiler(), version->last_line())
                                   : host_compiler();
  fs::TempDir dir("sagebuild-doctor");
  const stdfs::path source = dir.path() / "probe.cu";
  std::ofstream(source) << "__global__ void probe(float* x) { x[threadIdx.x] = 1.0f; }\n"
                           "int main() { probe<<<1, 1>>>(nullptr); }\n";
  std::vector<std::string> argv = {toolkit.nvcc.string(), source.string(), "-o",
                                   (dir.path() / "probe").string(), "-arch=sm_80"};
  if (const char* c = std::getenv("CUDAHOSTCXX"); c && *c) {
    argv.insert(argv.begin() + 1, {"-ccbin", c});
  }
  auto compiled = platform::run_process(argv, {.timeout = 120s, .keep_output = 4096});
  if (compiled && compiled->ok()) {
    check.detail =
        fmt::format("{} compiles and links a kernel with nvcc {}", compiler, toolkit.version);
    return check;
  }
  check.health = Health::problem;
  check.detail = fmt::format("nvcc {} with {} cannot compile and link a kernel: {}",
                             toolkit.version, compiler, last_line_of(compiled));
  check.fix = fmt::format(
      "install a host compiler CUDA {} supports and name it in CUDAHOSTCXX (e.g. "
      "CUDAHOSTCXX=/usr/bin/g++-13)",
      toolkit.release.str());
  return check;
}

// The cached environment of a Python and torch, if one was made (envs/cp312-torch2.11.0-*).
std::optional<stdfs::path> cached_environment(const stdfs::path& cache, const Version& python,
                                              const Version& torch) {
  const std::string prefix =
      fmt::format("cp{}{}-torch{}-", python.major(), python.minor(), torch.str());
  std::error_code ec;
  for (const auto& item :
       stdfs::directory_iterator(store::BuildCache(cache).directory(store::CacheKind::envs), ec)) {
    const std::string name = item.path().filename().string();
    if (name.starts_with(prefix) && stdfs::exists(item.path() / "sagebuild-env.json", ec)) {
      return item.path();
    }
  }
  return std::nullopt;
}

// Free space where `path` is (or would be made).
std::optional<double> free_gb(stdfs::path path) {
  std::error_code ec;
  while (!path.empty() && !stdfs::exists(path, ec))
    path = path.parent_path();
  const auto space = stdfs::space(path.empty() ? stdfs::path(".") : path, ec);
  if (ec) return std::nullopt;
  return static_cast<double>(space.available) / 1e9;
}

}  // namespace

DoctorReport examine_native(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                            const BuildOptions& o) {
  DoctorReport report;
  // Per entry: its interpreter (as the build finds it) and, per distinct Python, one line.
  std::map<std::string, Expected<EntryPython>> pythons;
  std::set<std::string> python_checked;
  for (const matrix::Entry& e : entries) {
    auto python = find_entry_python(m, e, o);
    if (python_checked.insert(e.python.str()).second) {
      DoctorCheck check{"python", "Python " + e.python.str()};
      if (python && python->version == e.python) {
        check.detail = python->python.string() + (python->existing_env ? " (--python-env)" : "");
      } else if (python) {
        check.health = Health::warning;
        check.detail = fmt::format("not here; its {} entries build with Python {} ({})",
                                   e.abi_name(), python->version.str(), python->python.string());
        check.fix = fmt::format("pyenv install {} (or set toolchains.python in matrix.yaml)",
                                e.python.str());
      } else {
        check.health = Health::problem;
        check.detail = python.error().message;
        check.fix = fmt::format(
            "pyenv install {0}, or set toolchains.python \"{0}\" in matrix.yaml to its "
            "interpreter",
            e.python.str());
      }
      report.checks.push_back(check);
    }
    pythons.emplace(e.id, python);
  }

  // Per distinct CUDA: the toolkit, and whether the host compiler works with it.
  std::map<std::string, std::string> toolkit_problem;  // CUDA -> why entries of it cannot build
  std::set<std::string> provisioned;                   // CUDA versions the build would provision
  for (const matrix::Entry& e : entries) {
    const std::string cuda = e.cuda.str();
    if (toolkit_problem.count(cuda)) continue;
    DoctorCheck check{"cuda", "CUDA " + cuda};
    const auto python = pythons.at(e.id);
    auto toolkit = find_entry_toolkit(m, e, o, python ? python->python : "python3", false);
    if (toolkit) {
      check.detail = fmt::format("nvcc {}: {}", toolkit->version, toolkit->origin);
      report.checks.push_back(check);
      DoctorCheck host = try_host_compiler(*toolkit);
      toolkit_problem[cuda] =
          host.health == Health::problem
              ? fmt::format("{} cannot compile with CUDA {}", host_compiler(), cuda)
              : "";
      report.checks.push_back(host);
      continue;
    }
    const std::string& why = toolkit.error().message;
    if (why.find("would be provisioned from PyPI") != std::string::npos) {
      check.health = Health::warning;
      check.detail = why;
      check.fix =
          fmt::format("nothing to do: the first build installs it (about {:.0f} GB)", kToolkitGb);
      provisioned.insert(cuda);
      toolkit_problem[cuda] = "";
    } else {
      check.health = Health::problem;
      const std::size_t fix_at = why.find(". Install it");
      check.detail = why.substr(0, fix_at);
      check.fix = fix_at == std::string::npos ? "" : "install it" + why.substr(fix_at + 12);
      toolkit_problem[cuda] = why.substr(0, why.find(':'));
    }
    report.checks.push_back(check);
  }

  // Per distinct Python and torch: an environment in the cache, or one the first build makes.
  double needed_gb = 0;
  std::set<std::string> seen_envs, seen_torch_runtime;
  for (const matrix::Entry& e : entries) {
    const auto& python = pythons.at(e.id);
    needed_gb += kEntryGb;
    if (!python) continue;
    const std::string key = python->version.str() + " " + e.torch.str();
    if (!seen_envs.insert(key).second) continue;
    DoctorCheck check{"torch",
                      fmt::format("torch {} for Python {}", e.torch.str(), python->version.str())};
    if (python->existing_env) {
      check.detail = python->python.string() + " (--python-env)";
    } else if (auto env = cached_environment(o.cache, python->version, e.torch)) {
      check.detail = "cached: " + env->string();
      seen_torch_runtime.insert(e.torch.str());
    } else {
      check.health = Health::warning;
      check.detail = fmt::format(
          "not in the cache yet: the first build installs torch=={} from {} (several GB to "
          "download)",
          e.torch.str(), o.torch.index_url.empty() ? "pip's index" : redact_url(o.torch.index_url));
      check.fix = "nothing to do, given network access to the index (or pass --python-env)";
      needed_gb += kEnvironmentGb;
      if (seen_torch_runtime.insert(e.torch.str()).second) needed_gb += kRuntimeGb;
    }
    report.checks.push_back(check);
  }
  needed_gb += kToolkitGb * static_cast<double>(provisioned.size());

  // Disk where the cache and the build go; memory for the compiles the build would run.
  for (const auto& [what, where] : std::vector<std::pair<std::string, stdfs::path>>{
           {"the cache", o.cache}, {"the build", o.root / "build"}}) {
    DoctorCheck check{"disk", "disk for " + what};
    const auto free = free_gb(where);
    const double need = what == "the cache"
                            ? needed_gb - kEntryGb * static_cast<double>(entries.size())
                            : kEntryGb * static_cast<double>(entries.size()) + 1.0;
    if (!free) {
      check.health = Health::warning;
      check.detail = "cannot tell the free space at " + where.string();
    } else if (*free < need) {
      check.health = Health::problem;
      check.detail =
          fmt::format("{:.1f} GB free at {}; about {:.1f} GB needed", *free, where.string(), need);
      check.fix = what == "the cache"
                      ? "free space, `sagebuild cache prune`, or --cache-dir elsewhere"
                      : "free space where the repository is, or build fewer entries";
    } else {
      check.detail =
          fmt::format("{:.1f} GB free at {}; about {:.1f} GB needed", *free, where.string(), need);
    }
    report.checks.push_back(check);
  }
  {
    const BuildBudget budget = budget_for(m, entries, o);
    DoctorCheck check{"memory", "cores and memory"};
    check.detail = budget.why;
    if (available_memory_gb() < 4.0) {
      check.health = Health::warning;
      check.fix = "compiles run one at a time: the build is slow but works";
    }
    report.checks.push_back(check);
  }

  for (const matrix::Entry& e : entries) {
    EntryReadiness r{e.id, true, ""};
    const auto& python = pythons.at(e.id);
    if (!python) {
      r.ready = false;
      r.reason = python.error().message.substr(0, python.error().message.find(':'));
    } else if (const auto it = toolkit_problem.find(e.cuda.str());
               it != toolkit_problem.end() && !it->second.empty()) {
      r.ready = false;
      r.reason = it->second;
    }
    report.entries.push_back(r);
  }
  return report;
}

}  // namespace sagebuild::backend
