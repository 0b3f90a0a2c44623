#include "backend/profile_build.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/build_steps.h"
#include "backend/import_test.h"
#include "backend/kernel_cache.h"
#include "backend/wheel_finish.h"
#include "platform/process.h"
#include "toolchain/cuda.h"
#include "toolchain/python.h"
#include "util/fs.h"
#include "util/secrets.h"
#include "util/sha256.h"
#include "util/text.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;

// The files of the package's own sources (python/), hashed: part of an entry's inputs.
std::string package_sources_digest(const stdfs::path& dir) {
  std::vector<stdfs::path> files;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec);
       !ec && it != stdfs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec) && (name == "__pycache__" || name == "build" || name == "dist")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& f : files) {
    auto d = sha256_file(f);
    all +=
        stdfs::relative(f, dir, ec).generic_string() + " " + (d ? to_hex(d->digest) : "?") + "\n";
  }
  const auto d = sha256({reinterpret_cast<const std::uint8_t*>(all.data()), all.size()});
  return to_hex(d);
}

// SKBUILD_CMAKE_DEFINE's SAGEATTN_* settings also decide the kernels.
std::vector<std::string> kernel_defines_from_environment() {
  std::vector<std::string> defines;
  if (const char* v = std::getenv("SKBUILD_CMAKE_DEFINE"); v && *v) {
    for (const std::string& d : text::split(v, ';')) {
      if (d.starts_with("SAGEATTN_")) defines.push_back(d);
    }
  }
  return defines;
}

// What the wheel build runs with on top of sagebuild's own environment.
std::vector<std::pair<std::string, std::string>> wheel_build_environment(
    const matrix::Entry& e, const ProfileBuildOptions& o, const toolchain::CudaToolkitPath& toolkit,
    const stdfs::path& kernels, const stdfs::path& binding, const std::string& torch_version,
    const stdfs::path& work, int parallel) {
  std::string defines = fmt::format("SAGEATTN_KERNELS_PREBUILT={};CUDAToolkit_ROOT={}",
                                    kernels.string(), toolkit.root.string());
  if (!binding.empty()) defines += ";SAGEATTN_BINDING_PREBUILT=" + binding.string();
  if (const char* user = std::getenv("SKBUILD_CMAKE_DEFINE"); user && *user) {
    defines = std::string(user) + ";" + defines;
  }
  // Without the binding cache, the binding is what this build compiles.
  if (const std::string launcher = compiler_launcher(); !launcher.empty() && binding.empty()) {
    defines += ";CMAKE_CXX_COMPILER_LAUNCHER=" + launcher;
  }
  const char* path = std::getenv("PATH");
  return {{"TORCH_CUDA_ARCH_LIST", e.arch_list()},
          {"SOURCE_DATE_EPOCH", std::to_string(o.source_date_epoch)},
          {"PATH", (toolkit.root / "bin").string() + ":" + (path ? path : "")},
          {"CUDA_HOME", toolkit.root.string()},
          {"CUDACXX", toolkit.nvcc.string()},
          {"SKBUILD_CMAKE_DEFINE", defines},
          {"SKBUILD_BUILD_DIR", (work / "cmake").string()},
          {"CMAKE_BUILD_PARALLEL_LEVEL", std::to_string(parallel)},
          // The torch pin without importing torch (python/build_support/torch_pin.py).
          {"SAGEATTENTION_TORCH_VERSION", torch_version.substr(0, torch_version.find('+'))},
          {"PIP_NO_INPUT", "1"}};
}

class EntryRun {
 public:
  EntryRun(const matrix::Matrix& m, const matrix::Entry& e, const ProfileBuildOptions& o,
           const BuildBudget& budget, Progress& progress)
      : m_(m), e_(e), o_(o), budget_(budget), progress_(progress) {
    result_.id = e.id;
    result_.log = o.root / "build" / "logs" / (e.id + ".log");
  }

  EntryResult run() {
    const auto start = Clock::now();
    std::error_code ec;
    stdfs::create_directories(result_.log.parent_path(), ec);
    stdfs::remove(result_.log, ec);
    try {
      execute();
    } catch (const std::exception& ex) {  // never a crash: report it as this entry's failure
      fail("build_failed", std::string("internal error: ") + ex.what());
    }
    if (result_.status.empty()) result_.status = "built";
    if (platform::stop_requested() && !result_.ok()) {
      result_.status = "interrupted";
      result_.message = "interrupted (Ctrl-C) during " + current_phase_;
    }
    result_.seconds = seconds_since(start);
    save();
    return result_;
  }

 private:
  void phase(const std::string& name) {
    end_phase();
    current_phase_ = name;
    phase_start_ = Clock::now();
    progress_.phase(e_.id, name);
    log_line("== " + name);
  }
  void end_phase() {
    if (!current_phase_.empty()) {
      result_.phases.push_back({current_phase_, seconds_since(phase_start_)});
    }
  }
  void note(const std::string& line) {
    progress_.note(e_.id, line);
    log_line(line);
  }
  void log_line(const std::string& line) {
    std::ofstream(result_.log, std::ios::app) << "sagebuild: " << line << "\n";
  }
  void fail(const std::string& status, const std::string& message) {
    end_phase();
    current_phase_ = current_phase_.empty() ? "planning" : current_phase_;
    result_.status = status;
    result_.message = message;
    log_line("error: " + message);
  }

  void execute() {
    // The toolchain first: a missing toolkit is found out in a second, before gigabytes of
    // torch are downloaded for nothing.
    phase("toolchain");
    auto python = toolchain::find_python(e_.python.str(), m_.toolchains);
    if (!python) return fail("build_failed", python.error().message);
    const matrix::CudaToolkit* cuda = m_.find_cuda(e_.cuda);
    if (!cuda)
      return fail("build_failed", fmt::format("CUDA {} is not in matrix.yaml", e_.cuda.str()));
    toolchain::CudaSearch search{
        o_.cuda_paths, m_.toolchains, o_.cache / "cuda",
        *python,       true,          [this](const std::string& l) { note(l); }};
    auto toolkit = toolchain::find_cuda(*cuda, search);
    if (!toolkit) return fail("build_failed", toolkit.error().message);
    note(fmt::format("Python {}: {}; CUDA {}: {}", e_.python.str(), python->string(),
                     toolkit->version, toolkit->origin));

    phase("environment");
    toolchain::EnvironmentRequest env_request{
        *python,  e_.python, e_.torch,    m_.package.build_requires,
        o_.torch, o_.cache,  result_.log, [this](const std::string& l) { note(l); }};
    auto env = toolchain::prepare_environment(env_request);
    if (!env) return fail("build_failed", env.error().message);
    note(fmt::format("torch {} (CUDA {}): {}{}", env->torch_version, env->torch_cuda, env->origin,
                     env->reused ? " (reused)" : ""));
    const auto torch_cuda = Version::parse(env->torch_cuda);
    if (!torch_cuda || torch_cuda->major() != e_.cuda.major()) {
      return fail("build_failed",
                  fmt::format("torch {} from {} is a CUDA {} build, but the entry is CUDA {}: the "
                              "major versions must agree; give --torch-index-url for the CUDA {} "
                              "variant",
                              env->torch_version, env->origin, env->torch_cuda, e_.cuda.str(),
                              e_.cuda.major()));
    }
    if (torch_cuda->minor() != e_.cuda.minor()) {
      note(
          fmt::format("torch {} is a CUDA {} build; the kernels are compiled with CUDA {} "
                      "(same major version: compatible)",
                      env->torch_version, env->torch_cuda, toolkit->version));
    }

    // The wheel's inputs: if the wheel in dist/ was built from exactly these, it is up to date.
    KernelInputs kernel_inputs{o_.root, *toolkit, e_.archs, kernel_defines_from_environment()};
    auto key = kernel_key(kernel_inputs);
    if (!key) return fail("build_failed", key.error().message);
    inputs_ = nlohmann::json{{"kernels", key->name},
                             {"package", package_sources_digest(o_.root / m_.package.source_dir)},
                             {"build_command", m_.package.build_command},
                             {"python", env->python.string()},
                             {"torch", env->torch_version},
                             {"version", o_.package_version},
                             {"source_date_epoch", o_.source_date_epoch},
                             {"commit", o_.git ? o_.git->commit : ""},
                             {"dirty", o_.git ? o_.git->dirty : false},
                             {"sagebuild", SAGEBUILD_VERSION}};
    const std::string inputs = inputs_.dump();
    const auto d = sha256({reinterpret_cast<const std::uint8_t*>(inputs.data()), inputs.size()});
    inputs_digest_ = to_hex(d);
    if (!o_.force && up_to_date()) return;

    phase("kernels");
    KernelBuildOptions kernel_options{o_.kernel_cache ? o_.cache : stdfs::path(),
                                      work(),
                                      budget_.parallel,
                                      budget_.nvcc_threads,
                                      result_.log,
                                      [this](const std::string& l) { note(l); }};
    auto kernels = kernel_library(kernel_inputs, *key, kernel_options);
    if (!kernels) return fail("build_failed", kernels.error().message);
    result_.kernels = kernels->key;
    result_.kernel_cache_hit = kernels->cache_hit;

    // The binding once per torch release (not with --no-cache: then each wheel compiles it).
    stdfs::path binding;
    if (o_.kernel_cache) {
      phase("binding");
      BindingInputs binding_inputs{
          o_.root,      env->python,   env->torch_version,   kernels->prefix,
          kernels->key, toolkit->root, kernel_inputs.defines};
      auto built_binding = binding_library(binding_inputs, kernel_options);
      if (!built_binding) return fail("build_failed", built_binding.error().message);
      binding = built_binding->library;
      binding_key_ = built_binding->key;
    }

    phase("wheel");
    std::error_code ec;
    const stdfs::path backend_out = work() / "backend";
    stdfs::remove_all(backend_out, ec);
    stdfs::create_directories(backend_out, ec);
    const std::vector<std::string> argv = build_command_argv(m_, o_.root, env->python, backend_out);
    if (argv.empty()) return fail("build_failed", "matrix.yaml has no package.build_command");
    auto built = platform::run_process(
        argv, {.working_directory = o_.root,
               .environment = wheel_build_environment(e_, o_, *toolkit, kernels->prefix, binding,
                                                      env->torch_version, work(), budget_.parallel),
               .timeout = std::chrono::hours(2),
               .keep_output = 4096,
               .log_file = result_.log});
    if (!built) return fail("build_failed", built.error().message);
    if (!built->ok()) {
      return fail("build_failed", fmt::format("the wheel build failed ({}); last lines of {}:\n{}",
                                              built->describe(), result_.log.string(),
                                              text::last_lines(built->output, 12)));
    }
    stdfs::path produced;
    for (const auto& f : stdfs::directory_iterator(backend_out, ec)) {
      if (f.path().extension() == ".whl") produced = f.path();
    }
    if (produced.empty()) {
      return fail("build_failed",
                  fmt::format("the build produced no wheel in {}", backend_out.string()));
    }

    phase("verify");
    wheel::Provenance p;
    p.sagebuild_version = SAGEBUILD_VERSION;
    if (o_.git) {
      p.commit = o_.git->commit;
      p.dirty = o_.git->dirty;
    }
    p.entry = e_.id;
    p.package = m_.package.name;
    p.version = o_.package_version;
    p.torch = e_.torch.str();
    p.cuda = toolkit->version;
    p.python = e_.python.str();
    p.platform_tag = e_.platform_tag;
    p.archs = e_.archs;
    p.flags = {"TORCH_CUDA_ARCH_LIST=" + e_.arch_list(),
               "SOURCE_DATE_EPOCH=" + std::to_string(o_.source_date_epoch),
               "kernels=" + kernels->key};
    if (!binding_key_.empty()) p.flags.push_back("binding=" + binding_key_);
    for (const std::string& define : kernel_inputs.defines)
      p.flags.push_back("SKBUILD_CMAKE_DEFINE=" + define);
    WheelToFinish finish{
        produced,
        work() / "out",
        dist(),
        e_.build_tag,
        o_.package_version,
        o_.source_date_epoch,
        p,
        {e_.id, e_.wheel, e_.torch, e_.cuda, e_.python, e_.platform_tag, e_.archs}};
    if (o_.import_test) {
      const stdfs::path env_python = env->python;
      finish.import_tester = [env_python](const stdfs::path& wheel, const wheel::ImportRequest& r) {
        return run_import_test(wheel, r, {.python = env_python});
      };
    }
    std::ostringstream report;
    const FinishedWheel finished = finish_wheel(finish, report);
    std::ofstream(result_.log, std::ios::app) << report.str();
    end_phase();
    current_phase_.clear();
    if (finished.outcome == FinishedWheel::Outcome::verification_failed) {
      result_.wheel = finished.wheel;
      return fail("verification_failed",
                  finished.message + (platform::stop_requested() ? "" : "\n" + finished.findings));
    }
    if (finished.outcome != FinishedWheel::Outcome::moved) {
      return fail("build_failed", finished.message);
    }
    result_.status = "built";
    result_.wheel = finished.wheel;
    result_.sha256 = finished.sha256;
    result_.size = finished.size;
    result_.checks = finished.checks;
    result_.message =
        fmt::format("{} ({:.1f} MB, {} checks passed)", finished.wheel.filename().string(),
                    static_cast<double>(finished.size) / 1e6, finished.checks);
  }

  bool up_to_date() {
    auto text = fs::read_file(results_file());
    if (!text) return false;
    try {
      const auto j = nlohmann::json::parse(*text);
      const std::string status = j.value("status", "");
      if (status != "built" && status != "up_to_date") return false;
      if (j.value("inputs", "") != inputs_digest_) {
        // Say why, like ninja -d explain: which inputs differ from the last build's.
        std::vector<std::string> changed;
        const auto& before =
            j.contains("input_values") ? j["input_values"] : nlohmann::json::object();
        for (const auto& [key, value] : inputs_.items()) {
          if (!before.contains(key) || before[key] != value) changed.push_back(key);
        }
        if (!changed.empty())
          note("rebuilding: changed since the last build: " + text::join(changed, ", "));
        return false;
      }
      const stdfs::path wheel = dist() / j.value("wheel", "");
      auto digest = sha256_file(wheel);
      if (!digest || to_hex(digest->digest) != j.value("sha256", "")) return false;
      end_phase();
      current_phase_.clear();
      result_.status = "up_to_date";
      result_.wheel = wheel;
      result_.sha256 = j.value("sha256", "");
      result_.size = digest->size;
      result_.kernels = j.value("kernels", "");
      result_.checks = j.value("checks", std::size_t{0});
      result_.message = fmt::format("{} is up to date (same sources, toolchain and torch)",
                                    wheel.filename().string());
      return true;
    } catch (const nlohmann::json::exception&) {
      return false;
    }
  }

  stdfs::path work() const { return o_.root / "build" / "sagebuild" / e_.id; }
  stdfs::path dist() const { return o_.dist.is_absolute() ? o_.dist : o_.root / o_.dist; }
  stdfs::path results_file() const { return o_.root / "build" / "results" / (e_.id + ".json"); }

  void save() {
    nlohmann::json inputs;
    if (result_.ok()) inputs = {{"digest", inputs_digest_}, {"values", inputs_}};
    write_result(o_.root, e_, result_, inputs);
  }

  const matrix::Matrix& m_;
  const matrix::Entry& e_;
  const ProfileBuildOptions& o_;
  const BuildBudget& budget_;
  Progress& progress_;
  EntryResult result_;
  std::string current_phase_;
  Clock::time_point phase_start_;
  std::string binding_key_;
  nlohmann::json inputs_;  // what decides the wheel (see execute)
  std::string inputs_digest_;
};

double available_memory_gb() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemAvailable:") return kb / (1024.0 * 1024.0);
    meminfo.ignore(256, '\n');
  }
  return 4.0;
}

}  // namespace

void write_result(const stdfs::path& root, const matrix::Entry& e, const EntryResult& r,
                  const nlohmann::json& inputs) {
  nlohmann::ordered_json record = {
      {"entry", e.id},          {"status", r.status},    {"python", e.python.str()},
      {"torch", e.torch.str()}, {"cuda", e.cuda_full},   {"platform", e.platform_tag},
      {"archs", e.archs},       {"log", r.log.string()}, {"seconds", r.seconds}};
  if (!r.message.empty() && !r.ok()) record["message"] = r.message;
  if (!r.wheel.empty()) record["wheel"] = r.wheel.filename().string();
  if (!r.sha256.empty()) {
    record["sha256"] = r.sha256;
    record["size"] = r.size;
  }
  if (r.checks > 0) record["checks"] = r.checks;
  if (!r.kernels.empty()) {
    record["kernels"] = r.kernels;
    record["kernel_cache_hit"] = r.kernel_cache_hit;
  }
  nlohmann::ordered_json phases = nlohmann::ordered_json::object();
  for (const auto& ph : r.phases)
    phases[ph.phase] = ph.seconds;
  record["phases"] = phases;
  if (inputs.contains("digest")) {
    record["inputs"] = inputs["digest"];
    record["input_values"] = inputs["values"];
  }
  const stdfs::path file = root / "build" / "results" / (e.id + ".json");
  std::error_code ec;
  stdfs::create_directories(file.parent_path(), ec);
  (void)fs::write_file_atomic(file, record.dump(2) + "\n");
}

BuildBudget plan_budget(int requested_jobs, std::size_t entries, unsigned cores, double memory_gb,
                        std::size_t kernel_files, std::size_t archs) {
  BuildBudget b;
  // 1.5 GB per compile process: nvcc's peak on these kernels was measured at 0.25 GB and g++ on
  // the torch binding at about 1 GB (docs/build.md); the margin keeps a busy machine out of swap.
  const int by_memory = std::max(1, static_cast<int>(memory_gb / 1.5));
  const int total = std::max(1, std::min(static_cast<int>(std::max(1u, cores)), by_memory));
  b.jobs = std::max(
      1, std::min<int>(requested_jobs, static_cast<int>(std::max<std::size_t>(1, entries))));
  b.parallel = std::max(1, total / b.jobs);
  // nvcc --threads compiles the architectures of one file in parallel: worth it only when the
  // entry's share of processes exceeds the number of kernel files.
  const std::size_t files = std::max<std::size_t>(1, kernel_files);
  b.nvcc_threads = static_cast<int>(std::clamp<std::size_t>(
      static_cast<std::size_t>(b.parallel) / files, 1, std::max<std::size_t>(1, archs)));
  b.why = fmt::format(
      "{} entr{} at once, {} compile job{} each, nvcc --threads {} ({} cores, "
      "{:.0f} GB available: at most {} compile processes)",
      b.jobs, b.jobs == 1 ? "y" : "ies", b.parallel, b.parallel == 1 ? "" : "s", b.nvcc_threads,
      cores, memory_gb, total);
  return b;
}

std::vector<EntryResult> build_entries(const matrix::Matrix& m,
                                       const std::vector<matrix::Entry>& entries,
                                       const ProfileBuildOptions& options, Progress& progress,
                                       std::ostream& out) {
  std::size_t kernel_files = 0;
  for (const auto& f : kernel_sources(options.root))
    kernel_files += f.extension() == ".cu" ? 1 : 0;
  std::size_t archs = 1;
  for (const auto& e : entries)
    archs = std::max(archs, e.archs.size());
  const BuildBudget budget =
      plan_budget(options.jobs, entries.size(), std::thread::hardware_concurrency(),
                  available_memory_gb(), kernel_files, archs);
  out << "sagebuild: " << budget.why << "\n";

  std::vector<EntryResult> results(entries.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < entries.size(); i = next++) {
      if (platform::stop_requested()) {
        results[i].id = entries[i].id;
        results[i].status = "not_started";
        results[i].message = "not started (interrupted)";
        continue;
      }
      results[i] = EntryRun(m, entries[i], options, budget, progress).run();
      const EntryResult& r = results[i];
      std::string line = r.ok() ? r.message : fmt::format("{}: {}", r.status, r.message);
      if (!r.ok() && r.status != "interrupted")
        line += fmt::format("\n  full log: {}", r.log.string());
      progress.finished(r.id, r.ok(), fmt::format("{} ({:.0f} s)", line, r.seconds));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < budget.jobs; ++t)
    threads.emplace_back(worker);
  for (auto& t : threads)
    t.join();
  progress.stop();
  return results;
}

void describe_entries(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                      const ProfileBuildOptions& o, std::ostream& out) {
  for (const matrix::Entry& e : entries) {
    out << fmt::format("{}\n", e.id);
    out << fmt::format("  wheel        {}\n", e.wheel);
    auto python = toolchain::find_python(e.python.str(), m.toolchains);
    out << fmt::format("  python       {}\n",
                       python ? python->string() : "MISSING: " + python.error().message);
    out << fmt::format("  environment  {}/envs/cp{}{}-torch{}-*: torch=={} from {}{}\n",
                       o.cache.string(), e.python.major(), e.python.minor(), e.torch.str(),
                       e.torch.str(),
                       o.torch.index_url.empty() ? "pip's index" : redact_url(o.torch.index_url),
                       o.torch.find_links.empty() ? "" : " + --find-links " + o.torch.find_links);
    const matrix::CudaToolkit* cuda = m.find_cuda(e.cuda);
    if (!cuda) continue;
    toolchain::CudaSearch search{o.cuda_paths,
                                 m.toolchains,
                                 o.cache / "cuda",
                                 python ? *python : stdfs::path("python3"),
                                 false,
                                 {}};
    auto toolkit = toolchain::find_cuda(*cuda, search);
    stdfs::path kernels;
    toolchain::CudaToolkitPath shown;
    if (toolkit) {
      shown = *toolkit;
      out << fmt::format("  toolkit      CUDA {}: {}\n", toolkit->version, toolkit->origin);
      KernelInputs inputs{o.root, *toolkit, e.archs, kernel_defines_from_environment()};
      auto key = kernel_key(inputs);
      kernels = o.kernel_cache && key
                    ? o.cache / "kernels" / key->name / "prefix"
                    : o.root / "build" / "sagebuild" / e.id / "kernels" / "prefix";
      std::error_code ec;
      out << fmt::format("  kernels      {} ({})\n", key ? key->name : key.error().message,
                         !o.kernel_cache ? "compiled for this entry (--no-cache)"
                         : stdfs::exists(kernels.parent_path() / "key.json", ec) ? "cached"
                                                                                 : "to compile");
    } else {
      // The plan still shows the commands, with the toolkit's place left open.
      out << fmt::format("  toolkit      MISSING: {}\n", toolkit.error().message);
      shown.root = fmt::format("<CUDA {} toolkit>", e.cuda.str());
      shown.nvcc = shown.root / "bin" / "nvcc";
      kernels = o.cache / "kernels" / fmt::format("cuda{}-<key>", e.cuda.str()) / "prefix";
    }
    const stdfs::path work = o.root / "build" / "sagebuild" / e.id;
    const stdfs::path venv_python = o.cache / "envs" / "<environment>" / "bin" / "python";
    out << "  command      "
        << text::join(build_command_argv(m, o.root, venv_python, work / "backend"), " ") << "\n";
    const stdfs::path binding = o.kernel_cache ? o.cache / "bindings" /
                                                     fmt::format("torch{}-<key>", e.torch.str()) /
                                                     "prefix" / "sageattention" / "_kernels.so"
                                               : stdfs::path();
    for (const auto& [name, value] :
         wheel_build_environment(e, o, shown, kernels, binding, e.torch.str(), work, 1)) {
      if (name != "PATH") out << fmt::format("    {}={}\n", name, value);
    }
    out << "\n";
  }
}

std::string format_results(const std::vector<EntryResult>& results) {
  std::string table =
      fmt::format("{:<44} {:<20} {:>7}  {}\n", "entry", "status", "seconds", "wheel / reason");
  for (const EntryResult& r : results) {
    std::string what =
        r.ok() ? r.wheel.filename().string() : r.message.substr(0, r.message.find('\n'));
    table += fmt::format("{:<44} {:<20} {:>7.1f}  {}\n", r.id, r.status, r.seconds, what);
  }
  return table;
}

}  // namespace sagebuild::backend
