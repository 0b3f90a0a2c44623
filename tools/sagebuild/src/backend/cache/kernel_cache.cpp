#include "backend/cache/kernel_cache.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/build_steps.h"
#include "platform/process.h"
#include "store/build_cache.h"
#include "util/fs.h"
#include "util/glob.h"
#include "util/json_text.h"
#include "util/sha256.h"
#include "util/text.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;

// Bump when the layout of an entry or the way it is built changes.
constexpr int kCacheFormat = 2;

std::string first_line_of(const std::vector<std::string>& argv) {
  auto r = platform::run_process(argv, {.timeout = std::chrono::minutes(1)});
  if (!r || !r->ok()) return "";
  const std::string text(text::trim(r->output));
  return text.substr(0, text.find('\n'));
}

std::string last_line_of(const std::vector<std::string>& argv) {
  auto r = platform::run_process(argv, {.timeout = std::chrono::minutes(1)});
  return r && r->ok() ? r->last_line() : "";
}

Expected<Ok> run_step(const std::vector<std::string>& argv, const KernelBuildOptions& options,
                      const std::string& what,
                      const std::vector<std::pair<std::string, std::string>>& environment = {}) {
  auto r = platform::run_process(
      argv, {.environment = environment, .timeout = std::chrono::hours(2), .log = options.log});
  if (!r) return Error{fmt::format("{}: {}", what, r.error().message)};
  if (r->cancelled) return Error{fmt::format("{}: interrupted", what)};
  if (!r->ok()) {
    // CMake writes its errors to stderr, unbuffered, ahead of its buffered stdout: quote from
    // the first "CMake Error" when there is one, else the end (a compiler's error, via ninja).
    std::string_view output = r->output;
    std::string quoted;
    if (const std::size_t at = output.find("CMake Error"); at != std::string_view::npos) {
      std::vector<std::string> lines = text::split(output.substr(at), '\n');
      lines.resize(std::min<std::size_t>(lines.size(), 8));
      quoted = text::last_lines(text::join(lines, "\n"), 8);
    } else {
      quoted = text::last_lines(output, 12);
    }
    return Error{fmt::format("{} failed ({}); from {}:\n{}", what, r->describe(),
                             options.log_path.string(), quoted)};
  }
  return Ok{};
}

// Configures the repository's CMake project into dir/build with `settings` (-D values, on top
// of a Release build without tests), builds it, installs it into dir/prefix and
// drops the objects. `what` names it in messages ("the kernels"); `environment` is set for
// every step.
Expected<Ok> cmake_install_into(
    const stdfs::path& root, const stdfs::path& dir, const std::vector<std::string>& settings,
    const KernelBuildOptions& options, const std::string& what,
    const std::vector<std::pair<std::string, std::string>>& environment = {}) {
  const stdfs::path build = dir / "build";
  std::vector<std::string> configure = {"cmake", "-S", root.string(), "-B", build.string()};
  if (platform::find_in_path("ninja")) configure.insert(configure.end(), {"-G", "Ninja"});
  for (const std::string& setting :
       {std::string("CMAKE_BUILD_TYPE=Release"), std::string("BUILD_TESTING=OFF"),
        "CMAKE_INSTALL_PREFIX=" + (dir / "prefix").string()}) {
    configure.push_back("-D" + setting);
  }
  for (const std::string& setting : settings)
    configure.push_back("-D" + setting);
  if (auto r = run_step(configure, options, "configuring " + what, environment); !r) return r;
  if (auto r = run_step({"cmake", "--build", build.string(), "--parallel",
                         std::to_string(std::max(1, options.parallel))},
                        options, "compiling " + what, environment);
      !r) {
    return r;
  }
  // Installed, not copied from the build tree: an install has no build-tree RPATH.
  if (auto r = run_step({"cmake", "--install", build.string()}, options, "installing " + what,
                        environment);
      !r) {
    return r;
  }
  std::error_code ec;
  stdfs::remove_all(build, ec);  // the objects are not needed once the library is installed
  return Ok{};
}

// The kernels' own settings: the part's (with {archs}), the toolkit, nvcc's threads, the user's.
std::vector<std::string> kernel_settings(const KernelInputs& in) {
  std::vector<std::string> settings =
      part_settings(in.part, {{"archs", text::join(in.archs, ";")}});
  settings.insert(settings.end(), in.user_settings.begin(), in.user_settings.end());
  return settings;
}

Expected<Ok> build_into(const KernelInputs& in, const KernelBuildOptions& options,
                        const stdfs::path& dir) {
  std::vector<std::string> settings = {
      "CMAKE_CUDA_COMPILER=" + in.cuda.nvcc.string(), "CUDAToolkit_ROOT=" + in.cuda.root.string(),
      "CMAKE_CUDA_FLAGS=--threads=" + std::to_string(std::max(1, options.nvcc_threads))};
  if (!options.launcher.empty()) {  // a miss whose files were compiled before costs seconds
    settings.push_back("CMAKE_CUDA_COMPILER_LAUNCHER=" + options.launcher);
    settings.push_back("CMAKE_CXX_COMPILER_LAUNCHER=" + options.launcher);
  }
  const std::vector<std::string> own = kernel_settings(in);
  settings.insert(settings.end(), own.begin(), own.end());
  return cmake_install_into(in.root, dir, settings, options, "the kernels", options.environment);
}

// {relative path: sha256} of each file, in the given order; an empty list is an error, since a
// part whose sources match nothing is a mistake in matrix.yaml, not something to cache.
Expected<nlohmann::ordered_json> file_digests(const stdfs::path& root,
                                              const std::vector<std::string>& files,
                                              const std::string& what) {
  if (files.empty()) {
    return Error{
        fmt::format("{}'s sources (matrix.yaml) match no file under {}", what, root.string())};
  }
  nlohmann::ordered_json digests = nlohmann::ordered_json::object();
  for (const std::string& rel : files) {
    auto digest = sha256_file(root / rel);
    if (!digest) {
      return Error{fmt::format("cannot read {}: {}", rel, digest.error().message)};
    }
    digests[rel] = to_hex(digest->digest);
  }
  return digests;
}

// "<prefix>-<16 hex digits of the inputs' digest>"
std::string key_name(std::string_view prefix, const std::string& json) {
  const auto d = sha256({reinterpret_cast<const std::uint8_t*>(json.data()), json.size()});
  return fmt::format("{}-{}", prefix, to_hex(d).substr(0, 16));
}

// The build cache's entry `name` of `kind`, made by `build` into a staging directory (which
// then gets key.json) unless it is there. Says hit, miss or waiting.
Expected<store::Taken> cached_entry(store::CacheKind kind, const std::string& name,
                                    const std::string& key_json,
                                    const std::function<Expected<Ok>(const stdfs::path&)>& build,
                                    const KernelBuildOptions& options) {
  const char* what = kind == store::CacheKind::kernels ? "kernel" : "binding";
  auto taken =
      store::BuildCache(options.cache)
          .take(kind, name,
                {"key.json",
                 [&](const stdfs::path& staging) -> Expected<Ok> {
                   if (options.note) {
                     options.note(fmt::format("{} cache miss: compiling {}", what, name));
                   }
                   if (auto r = build(staging); !r) return r;
                   return fs::write_file_atomic(staging / "key.json", key_json);
                 },
                 [&] {
                   if (options.note) {
                     options.note(fmt::format("waiting for {} to be compiled elsewhere", name));
                   }
                 }});
  if (taken && taken->hit && options.note) {
    options.note(fmt::format("{} cache hit: {}", what, name));
  }
  return taken;
}

}  // namespace

std::vector<std::string> part_sources(const stdfs::path& root, const matrix::NativePart& part) {
  return glob::find_files(root, part.sources, part.exclude);
}

std::vector<std::string> user_settings_from_environment(const std::string& pattern) {
  std::vector<std::string> settings;
  if (pattern.empty()) return settings;
  if (const char* v = std::getenv("SKBUILD_CMAKE_DEFINE"); v && *v) {
    for (const std::string& d : text::split(v, ';')) {
      const std::string name = d.substr(0, d.find_first_of(":="));
      if (!name.empty() && glob::matches(pattern, name)) settings.push_back(d);
    }
  }
  return settings;
}

std::vector<std::string> part_settings(
    const matrix::NativePart& part,
    const std::vector<std::pair<std::string, std::string>>& values) {
  std::vector<std::string> out;
  for (const auto& [name, value] : part.cmake)
    out.push_back(name + "=" + text::fill_placeholders(value, values));
  return out;
}

Expected<CacheKey> kernel_key(const KernelInputs& in) {
  auto sources = file_digests(in.root, part_sources(in.root, in.part), "package.kernels");
  if (!sources) return sources.error();
  const char* cxx = std::getenv("CXX");
  std::error_code ec;
  const stdfs::path source_dir = stdfs::absolute(in.root, ec).lexically_normal();
  nlohmann::ordered_json inputs = {
      {"format", kCacheFormat},
      {"nvcc", in.cuda.version},
      {"nvcc_build", last_line_of({in.cuda.nvcc.string(), "--version"})},
      {"host_compiler", first_line_of({cxx && *cxx ? cxx : "c++", "--version"})},
      {"cuda_host_compiler", first_line_of({"g++", "--version"})},
      {"cmake", first_line_of({"cmake", "--version"})},
      {"archs", in.archs},
      {"settings", kernel_settings(in)},
      // Where the sources are: nvcc names a file's anonymous namespace and device stubs after
      // a digest of its absolute path, so the same sources compiled in another checkout give
      // other bytes, and a wheel must not mix them (docs/reproducible.md).
      {"source_dir", (ec ? in.root : source_dir).generic_string()},
      {"sources", *sources}};
  const std::string json = json_text(inputs, 2);
  return CacheKey{key_name(fmt::format("cuda{}", in.cuda.release.str()), json), json + "\n"};
}

Expected<KernelLibrary> kernel_library(const KernelInputs& inputs, const CacheKey& key,
                                       const KernelBuildOptions& options) {
  if (options.cache.empty()) {  // --no-cache: compiled for this entry alone
    const stdfs::path dir = options.scratch / "kernels";
    std::error_code ec;
    stdfs::remove_all(dir, ec);
    if (options.note) options.note(fmt::format("compiling the kernels ({}, no cache)", key.name));
    if (auto r = build_into(inputs, options, dir); !r) return r.error();
    return KernelLibrary{dir / "prefix", key.name, false};
  }
  auto taken = cached_entry(
      store::CacheKind::kernels, key.name, key.json,
      [&](const stdfs::path& staging) { return build_into(inputs, options, staging); }, options);
  if (!taken) return taken.error();
  return KernelLibrary{taken->path / "prefix", key.name, taken->hit};
}

Expected<CacheKey> binding_key(const BindingInputs& in) {
  // What the binding is compiled from: its sources and CMake, the kernels it links, the torch
  // it compiles against (one release's headers are the same for every Python) and the ABI. The
  // compilers, CMake and the checkout's path are in the kernel key already.
  auto sources = file_digests(in.root, part_sources(in.root, in.part), "package.binding");
  if (!sources) return sources.error();
  nlohmann::ordered_json environment = nlohmann::ordered_json::object();
  for (const auto& [name, value] : in.environment)
    environment[name] = value;
  nlohmann::ordered_json inputs = {
      {"format", kCacheFormat},    {"kernels", in.kernels_key},
      {"torch", in.torch_version}, {"abi", matrix::binding_abi_name(in.abi)},
      {"settings", in.settings},   {"environment", environment},
      {"sources", *sources}};
  const std::string json = json_text(inputs, 2) + "\n";
  const std::string torch = in.torch_version.substr(0, in.torch_version.find('+'));
  return CacheKey{
      key_name((in.abi == matrix::Abi::stable ? "stable-torch" : "torch") + torch, json), json};
}

Expected<BindingLibrary> binding_library(const BindingInputs& in, const CacheKey& key,
                                         const KernelBuildOptions& options) {
  const std::string& name = key.name;
  const std::string& json = key.json;
  auto taken = cached_entry(
      store::CacheKind::bindings, name, json,
      [&](const stdfs::path& staging) -> Expected<Ok> {
        std::vector<std::string> settings = {in.kernels_handoff + "=" + in.kernels.string(),
                                             "CUDAToolkit_ROOT=" + in.cuda_root.string(),
                                             "Python3_EXECUTABLE=" + in.python.string()};
        settings.insert(settings.end(), in.settings.begin(), in.settings.end());
        if (!options.launcher.empty()) {
          settings.push_back("CMAKE_CXX_COMPILER_LAUNCHER=" + options.launcher);  // a faster miss
        }
        std::vector<std::pair<std::string, std::string>> environment = in.environment;
        environment.insert(environment.end(), options.environment.begin(),
                           options.environment.end());
        return cmake_install_into(in.root, staging, settings, options, "the binding", environment);
      },
      options);
  if (!taken) return taken.error();
  return BindingLibrary{taken->path / "prefix" / in.part.library, name, taken->hit};
}

}  // namespace sagebuild::backend
