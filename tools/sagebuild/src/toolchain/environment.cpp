#include "toolchain/environment.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "platform/process.h"
#include "store/build_cache.h"
#include "toolchain/python.h"
#include "util/fs.h"
#include "util/secrets.h"
#include "util/sha256.h"
#include "util/text.h"

namespace sagebuild::toolchain {
namespace {

namespace stdfs = std::filesystem;

// Bump when what an environment holds changes: older ones are then not reused.
constexpr int kLayoutVersion = 1;

std::string short_digest(std::string_view text) {
  const auto d = sha256({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  return to_hex(d).substr(0, 16);
}

// torch's requirements that apply here, split into the CUDA runtime wheels (shared) and the
// rest; extras and triton left out. Uses pip's own copy of `packaging` to evaluate markers.
constexpr const char* kSplitRequirements = R"(import json
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
runtime, other = [], []
for text in requires('torch') or []:
    r = Requirement(text)
    if r.marker is not None and not r.marker.evaluate({'extra': ''}):
        continue
    name = r.name.lower().replace('_', '-')
    if name == 'triton':
        continue
    r.marker = None
    (runtime if name.startswith('nvidia-') or name == 'cuda-toolkit' else other).append(str(r))
print(json.dumps({'runtime': sorted(runtime), 'other': sorted(other)}))
)";

constexpr const char* kProbeTorch = R"(import json, torch
print(json.dumps({'version': torch.__version__, 'cuda': torch.version.cuda or ''}))
)";

struct Pip {
  stdfs::path python;
  platform::LogLines log;

  Expected<Ok> run(std::vector<std::string> args, const std::string& what) const {
    std::vector<std::string> argv = {
        python.string(),      "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-warn-conflicts"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = platform::run_process(
        argv,
        {.environment = {{"PIP_NO_INPUT", "1"}}, .timeout = std::chrono::minutes(60), .log = log});
    if (!r) return Error{fmt::format("{}: {}", what, r.error().message)};
    if (r->cancelled) return Error{fmt::format("{}: interrupted", what)};
    if (!r->ok())
      return Error{fmt::format("{} failed ({}): {}", what, r->describe(), r->last_line())};
    return Ok{};
  }
};

std::vector<std::string> index_args(const TorchSource& s, bool for_torch) {
  std::vector<std::string> args;
  if (!s.index_url.empty()) {
    args.push_back(for_torch ? "--index-url" : "--extra-index-url");
    args.push_back(s.index_url);
  }
  if (!s.find_links.empty()) {
    args.push_back("--find-links");
    args.push_back(s.find_links);
  }
  return args;
}

// A cache entry taken (store::BuildCache::take), with the wait said in the log.
Expected<store::Taken> take_entry(const store::BuildCache& cache, store::CacheKind kind,
                                  const std::string& name, const std::string& marker,
                                  const std::function<Expected<Ok>(const stdfs::path&)>& fill,
                                  const std::function<void(const std::string&)>& note) {
  return cache.take(kind, name, {marker, fill, [&] {
                                   if (note) {
                                     note(fmt::format("waiting for another sagebuild to finish {}",
                                                      cache.path(kind, name).string()));
                                   }
                                 }});
}

Expected<std::string> site_packages(const stdfs::path& python) {
  auto r = platform::run_process(
      {python.string(), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
  if (!r || !r->ok())
    return Error{fmt::format("cannot ask {} for its site-packages", python.string())};
  return r->last_line();
}

constexpr const char* kRuntimePth = "sagebuild-torch-runtime.pth";

// torch's libraries find the CUDA runtime through their run path, $ORIGIN/../../<dir>/<lib>/lib:
// beside torch in site-packages, where pip puts the runtime wheels (nvidia/..., and for torch 2.6
// a top-level cusparselt/). The shared runtime is elsewhere (the .pth puts it on sys.path for
// Python only), so each of its top-level folders is linked into site-packages; without the links
// the dynamic loader searches the system's directories next, and a system CUDA runtime of the
// same soname but an older release (Debian's nvidia-cuda-toolkit installs libcudart.so.12 of
// 12.4) is loaded instead: torch 2.10 (CUDA 12.8) then fails with "undefined symbol:
// cudaGetDriverEntryPointByVersion", and torch 2.6 finds no libcusparseLt.so.0.
void link_runtime_into(const stdfs::path& site, const stdfs::path& shared) {
  std::error_code ec;
  for (const auto& entry : stdfs::directory_iterator(shared, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || name.ends_with(".dist-info") || name == "__pycache__" ||
        name == "bin") {
      continue;
    }
    if (stdfs::exists(stdfs::symlink_status(site / name, ec))) continue;
    stdfs::create_directory_symlink(entry.path(), site / name, ec);
  }
}

// The site-packages folders of a venv where its runtime .pth would be.
std::vector<stdfs::path> runtime_pth_candidates(const stdfs::path& venv) {
  std::vector<stdfs::path> candidates = {venv / "Lib" / "site-packages" / kRuntimePth};
  std::error_code ec;
  for (const auto& lib : stdfs::directory_iterator(venv / "lib", ec))
    candidates.push_back(lib.path() / "site-packages" / kRuntimePth);
  return candidates;
}

}  // namespace

std::optional<stdfs::path> shared_runtime_of(const stdfs::path& venv) {
  for (const stdfs::path& pth : runtime_pth_candidates(venv)) {
    auto text = fs::read_file(pth, std::size_t{64} * 1024);
    if (!text) continue;
    std::string line = text->substr(0, text->find('\n'));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.pop_back();
    if (!line.empty()) return stdfs::path(line);
  }
  return std::nullopt;
}

Expected<BuildEnvironment> probe_torch(const stdfs::path& python, const platform::LogLines& log) {
  auto r = platform::run_process({python.string(), "-c", kProbeTorch},
                                 {.timeout = std::chrono::minutes(2), .log = log});
  if (!r) return r.error();
  if (!r->ok()) {
    return Error{fmt::format("{} cannot import torch: {}", python.string(), r->last_line())};
  }
  try {
    const auto j = nlohmann::json::parse(r->last_line());
    BuildEnvironment env;
    env.python = python;
    env.torch_version = j.at("version").get<std::string>();
    env.torch_cuda = j.at("cuda").get<std::string>();
    return env;
  } catch (const nlohmann::json::exception&) {
    return Error{
        fmt::format("cannot read what {}'s torch reports: {}", python.string(), r->last_line())};
  }
}

Expected<BuildEnvironment> prepare_environment(const EnvironmentRequest& request) {
  const std::string torch = request.torch.str();
  // An existing environment of this Python and torch, used as it is.
  for (const stdfs::path& python : request.source.existing) {
    const auto v = python_version(python);
    if (!v || *v != request.python.str()) continue;
    auto env = probe_torch(python, request.log);
    if (!env) continue;
    if (env->torch_version.substr(0, env->torch_version.find('+')) != torch) continue;
    env->reused = true;
    env->origin = fmt::format("{} (--python-env)", python.string());
    return env;
  }

  // The venv's name says what it is; its digest, everything that decides its contents.
  std::error_code ec;
  const stdfs::path base = stdfs::canonical(request.base_python, ec);
  const std::string identity = nlohmann::json{
      {"layout", kLayoutVersion},
      {"python", (ec ? request.base_python : base).string()},
      {"torch", torch},
      {"index_url", request.source.index_url},
      {"find_links", request.source.find_links},
      {"build_requires",
       request.build_requires}}.dump();
  const std::string name = fmt::format("cp{}{}-torch{}-{}", request.python.major(),
                                       request.python.minor(), torch, short_digest(identity));
  const store::BuildCache cache(request.cache);
  const stdfs::path venv = cache.path(store::CacheKind::envs, name);
  const std::string shown_index = redact_url(request.source.index_url);
  // A venv whose shared runtime is gone (removed by hand) cannot import torch: made again.
  if (auto runtime = shared_runtime_of(venv);
      runtime && !stdfs::exists(*runtime / "sagebuild-runtime.json", ec)) {
    if (request.note) {
      request.note(
          fmt::format("{} lost its CUDA runtime ({}): making it again", name, runtime->string()));
    }
    stdfs::remove(venv / "sagebuild-env.json", ec);
  }

  auto made = take_entry(
      cache, store::CacheKind::envs, name, "sagebuild-env.json",
      [&](const stdfs::path& staging) -> Expected<Ok> {
        if (request.note) {
          request.note(fmt::format("making the environment {} (torch {} from {})", name, torch,
                                   shown_index.empty() ? "pip's index" : shown_index));
        }
        auto created =
            platform::run_process({request.base_python.string(), "-m", "venv", staging.string()},
                                  {.timeout = std::chrono::minutes(5), .log = request.log});
        if (!created || !created->ok()) {
          return Error{fmt::format("cannot make a virtual environment with {}: {}",
                                   request.base_python.string(),
                                   created ? created->last_line() : created.error().message)};
        }
        // bin/python is a link to the base interpreter: the venv works after its rename as long as
        // everything runs as `python -m ...` (the scripts in bin/ carry the staging path).
        const Pip pip{staging / "bin" / "python", request.log};
        auto args = index_args(request.source, true);
        args.insert(args.begin(), {"--no-deps", "torch==" + torch});
        if (auto r = pip.run(args, fmt::format("installing torch {}", torch)); !r) return r.error();
        auto split = platform::run_process({pip.python.string(), "-c", kSplitRequirements},
                                           {.log = request.log});
        if (!split || !split->ok()) return Error{"cannot read torch's requirements"};
        nlohmann::json reqs;
        try {
          reqs = nlohmann::json::parse(split->last_line());
        } catch (const nlohmann::json::exception&) {
          return Error{"cannot read torch's requirements: " + split->last_line()};
        }
        const auto runtime = reqs.at("runtime").get<std::vector<std::string>>();
        auto other = reqs.at("other").get<std::vector<std::string>>();

        if (!runtime.empty()) {
          const std::string runtime_name = short_digest(nlohmann::json(runtime).dump());
          const stdfs::path shared = cache.path(store::CacheKind::torch_runtime, runtime_name);
          auto shared_made = take_entry(
              cache, store::CacheKind::torch_runtime, runtime_name, "sagebuild-runtime.json",
              [&](const stdfs::path& dir) -> Expected<Ok> {
                if (request.note) {
                  request.note(
                      fmt::format("installing torch {}'s CUDA runtime ({} packages) into {}", torch,
                                  runtime.size(), shared.string()));
                }
                auto rargs = index_args(request.source, false);
                rargs.insert(rargs.begin(), {"--target", dir.string()});
                rargs.insert(rargs.end(), runtime.begin(), runtime.end());
                if (auto r = pip.run(rargs, "installing torch's CUDA runtime"); !r)
                  return r.error();
                return fs::write_file_atomic(dir / "sagebuild-runtime.json",
                                             nlohmann::json(runtime).dump(2) + "\n");
              },
              request.note);
          if (!shared_made) return shared_made.error();
          auto site = site_packages(pip.python);
          if (!site) return site.error();
          if (auto w =
                  fs::write_file_atomic(stdfs::path(*site) / kRuntimePth, shared.string() + "\n");
              !w) {
            return w.error();
          }
          link_runtime_into(*site, shared);
        }
        other.insert(other.end(), request.build_requires.begin(), request.build_requires.end());
        if (!other.empty()) {
          auto oargs = index_args(request.source, false);
          oargs.insert(oargs.end(), other.begin(), other.end());
          if (auto r = pip.run(oargs, "installing torch's other requirements and build_requires");
              !r) {
            return r.error();
          }
        }
        return fs::write_file_atomic(staging / "sagebuild-env.json",
                                     nlohmann::json::parse(identity).dump(2) + "\n");
      },
      request.note);
  if (!made) return made.error();
  // Using the venv uses its runtime: both count as used now (what cache prune goes by). A venv
  // made before the runtime was linked beside torch gets the link now.
  if (auto runtime = shared_runtime_of(venv)) {
    store::BuildCache::mark_used(*runtime);
    for (const stdfs::path& pth : runtime_pth_candidates(venv)) {
      std::error_code missing;
      if (stdfs::exists(pth, missing)) link_runtime_into(pth.parent_path(), *runtime);
    }
  }
  // What torch reports is asked once (importing it takes a second) and kept beside the venv.
  const stdfs::path probed = venv / "sagebuild-torch.json";
  Expected<BuildEnvironment> env = Error{""};
  if (auto kept = fs::read_file(probed)) {
    try {
      const auto j = nlohmann::json::parse(*kept);
      env = BuildEnvironment{venv / "bin" / "python", j.at("version").get<std::string>(),
                             j.at("cuda").get<std::string>(), false, ""};
    } catch (const nlohmann::json::exception&) {
    }
  }
  if (!env) {
    env = probe_torch(venv / "bin" / "python", request.log);
    if (!env) return env.error();
    (void)fs::write_file_atomic(
        probed,
        nlohmann::json{{"version", env->torch_version}, {"cuda", env->torch_cuda}}.dump() + "\n");
  }
  env->reused = made->hit;
  env->origin = venv.string();
  return env;
}

}  // namespace sagebuild::toolchain
