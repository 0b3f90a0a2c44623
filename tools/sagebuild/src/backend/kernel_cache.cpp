#include "backend/kernel_cache.h"

#include <algorithm>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "platform/file_lock.h"
#include "platform/process.h"
#include "util/fs.h"
#include "util/sha256.h"
#include "util/text.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;

// Bump when the layout of an entry or the way it is built changes.
constexpr int kCacheFormat = 1;

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
                      const std::string& what) {
  auto r = platform::run_process(argv, {.timeout = std::chrono::hours(2), .log_file = options.log});
  if (!r) return Error{fmt::format("{}: {}", what, r.error().message)};
  if (r->cancelled) return Error{fmt::format("{}: interrupted", what)};
  if (!r->ok()) {
    return Error{fmt::format("{} failed ({}); log: {}", what, r->describe(), options.log.string())};
  }
  return Ok{};
}

Expected<Ok> build_into(const KernelInputs& in, const KernelBuildOptions& options,
                        const stdfs::path& dir) {
  const stdfs::path build = dir / "build";
  std::vector<std::string> configure = {
      "cmake",
      "-S",
      in.root.string(),
      "-B",
      build.string(),
      "-DCMAKE_BUILD_TYPE=Release",
      "-DSAGEBUILD_BUILD_TOOL=OFF",
      "-DBUILD_TESTING=OFF",
      "-DSAGEATTN_INSTALL_KERNELS=ON",
      "-DSAGEATTN_CUDART=shared",
      "-DSAGEATTN_ARCH_LIST=" + text::join(in.archs, ";"),
      "-DCMAKE_CUDA_COMPILER=" + in.cuda.nvcc.string(),
      "-DCUDAToolkit_ROOT=" + in.cuda.root.string(),
      "-DCMAKE_CUDA_FLAGS=--threads=" + std::to_string(std::max(1, options.nvcc_threads)),
      "-DCMAKE_INSTALL_PREFIX=" + (dir / "prefix").string()};
  if (platform::find_in_path("ninja")) configure.insert(configure.begin() + 5, {"-G", "Ninja"});
  for (const std::string& d : in.defines)
    configure.push_back("-D" + d);
  if (auto r = run_step(configure, options, "configuring the kernels"); !r) return r;
  if (auto r = run_step({"cmake", "--build", build.string(), "--parallel",
                         std::to_string(std::max(1, options.parallel))},
                        options, "compiling the kernels");
      !r) {
    return r;
  }
  if (auto r = run_step({"cmake", "--install", build.string()}, options, "installing the kernels");
      !r) {
    return r;
  }
  std::error_code ec;
  stdfs::remove_all(build, ec);  // objects are not needed once the archive is installed
  return Ok{};
}

}  // namespace

std::vector<stdfs::path> kernel_sources(const stdfs::path& root) {
  std::vector<stdfs::path> files = {"CMakeLists.txt", "kernels/CMakeLists.txt"};
  std::error_code ec;
  for (const char* dir : {"kernels/include", "kernels/src", "kernels/cmake"}) {
    for (auto it = stdfs::recursive_directory_iterator(root / dir, ec);
         !ec && it != stdfs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(stdfs::relative(it->path(), root, ec));
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

Expected<KernelKey> kernel_key(const KernelInputs& in) {
  nlohmann::ordered_json sources = nlohmann::ordered_json::object();
  for (const stdfs::path& rel : kernel_sources(in.root)) {
    auto digest = sha256_file(in.root / rel);
    if (!digest)
      return Error{fmt::format("cannot read {}: {}", rel.string(), digest.error().message)};
    sources[rel.generic_string()] = to_hex(digest->digest);
  }
  const char* cxx = std::getenv("CXX");
  nlohmann::ordered_json inputs = {
      {"format", kCacheFormat},
      {"nvcc", in.cuda.version},
      {"nvcc_build", last_line_of({in.cuda.nvcc.string(), "--version"})},
      {"host_compiler", first_line_of({cxx && *cxx ? cxx : "c++", "--version"})},
      {"cuda_host_compiler", first_line_of({"g++", "--version"})},
      {"cmake", first_line_of({"cmake", "--version"})},
      {"archs", in.archs},
      {"defines", in.defines},
      {"sources", sources}};
  const std::string json = inputs.dump(2);
  const auto d = sha256({reinterpret_cast<const std::uint8_t*>(json.data()), json.size()});
  return KernelKey{fmt::format("cuda{}-{}", in.cuda.release.str(), to_hex(d).substr(0, 16)),
                   json + "\n"};
}

Expected<KernelLibrary> kernel_library(const KernelInputs& inputs,
                                       const KernelBuildOptions& options) {
  auto key = kernel_key(inputs);
  if (!key) return key.error();
  std::error_code ec;
  if (options.cache.empty()) {  // --no-cache: compiled for this entry alone
    const stdfs::path dir = options.scratch / "kernels";
    stdfs::remove_all(dir, ec);
    if (options.note) options.note(fmt::format("compiling the kernels ({}, no cache)", key->name));
    if (auto r = build_into(inputs, options, dir); !r) return r.error();
    return KernelLibrary{dir / "prefix", key->name, false};
  }
  const stdfs::path entry = options.cache / "kernels" / key->name;
  if (stdfs::exists(entry / "key.json", ec)) {
    if (options.note) options.note(fmt::format("kernel cache hit: {}", key->name));
    return KernelLibrary{entry / "prefix", key->name, true};
  }
  auto lock = platform::FileLock::acquire(entry.string() + ".lock", [&] {
    if (options.note)
      options.note(fmt::format("waiting for {} to be compiled elsewhere", key->name));
  });
  if (!lock) return lock.error();
  if (stdfs::exists(entry / "key.json", ec)) {  // compiled while we waited
    if (options.note) options.note(fmt::format("kernel cache hit: {}", key->name));
    return KernelLibrary{entry / "prefix", key->name, true};
  }
  if (options.note) options.note(fmt::format("kernel cache miss: compiling {}", key->name));
  const stdfs::path staging = entry.string() + fmt::format(".tmp-{}", ::getpid());
  stdfs::remove_all(staging, ec);
  if (auto r = build_into(inputs, options, staging); !r) {
    stdfs::remove_all(staging, ec);
    return r.error();
  }
  if (auto w = fs::write_file_atomic(staging / "key.json", key->json); !w) {
    stdfs::remove_all(staging, ec);
    return w.error();
  }
  stdfs::remove_all(entry, ec);  // a leftover without key.json
  stdfs::rename(staging, entry, ec);
  if (ec) {
    stdfs::remove_all(staging, ec);
    return Error{fmt::format("cannot move the kernels into {}: {}", entry.string(), ec.message())};
  }
  return KernelLibrary{entry / "prefix", key->name, false};
}

}  // namespace sagebuild::backend
