#include "backend/native/entry_build.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/build_steps.h"
#include "backend/cache/compile_cache.h"
#include "backend/cache/kernel_cache.h"
#include "backend/entry_log.h"
#include "backend/install_check.h"
#include "backend/native/entry_toolchain.h"
#include "backend/native/wheel_environment.h"
#include "backend/wheel_finish.h"
#include "platform/file_lock.h"
#include "platform/process.h"
#include "toolchain/cuda.h"
#include "toolchain/python.h"
#include "util/fs.h"
#include "util/json_text.h"
#include "util/sha256.h"
#include "util/text.h"
#include "wheel/linux_policy.h"
#include "wheel/naming.h"

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

class EntryRun {
 public:
  EntryRun(const matrix::Matrix& m, const matrix::Entry& e, const BuildOptions& o,
           const BuildBudget& budget, Status& status)
      : m_(m),
        e_(e),
        o_(o),
        budget_(budget),
        log_(status, e.id, o.root / "build" / "logs" / (e.id + suffix() + ".log")) {
    result_.id = e.id;
    result_.log = log_.path();
  }

  EntryResult run() {
    const auto start = Clock::now();
    std::error_code ec;
    try {
      // One run at a time builds an entry of this checkout: two would share its work directory.
      // The lock is the system's, so a run that dies releases it.
      stdfs::create_directories(work().parent_path(), ec);
      auto lock = platform::FileLock::acquire(work().string() + ".lock", [&] {
        note("waiting for another sagebuild run that is building this entry");
      });
      if (!lock) {
        fail(EntryOutcome::build_failed, lock.error().message);
      } else {
        execute();
      }
    } catch (const std::exception& ex) {  // never a crash: report it as this entry's failure
      fail(EntryOutcome::build_failed, std::string("internal error: ") + ex.what());
    }
    if (platform::stop_requested() && !result_.ok()) {
      // The phase that was running when the stop arrived: the one that failed because of it,
      // else the one in progress, else the last one that ended.
      const std::string phase = failed_                   ? failed_phase_
                                : !current_phase_.empty() ? current_phase_
                                : !result_.phases.empty() ? result_.phases.back().phase
                                                          : std::string("planning");
      result_.outcome = EntryOutcome::interrupted;
      result_.message =
          fmt::format("interrupted by {} during the {} phase", platform::stop_cause(), phase);
    }
    result_.seconds = seconds_since(start);
    if (result_.outcome == EntryOutcome::up_to_date) {
      // Nothing was built: the last real build's log and record still describe the wheel.
      log_.discard();
      return result_;
    }
    result_.log = log_.keep();
    if (!o_.reproducibility_run) {
      write_result(o_.root, e_, result_,
                   result_.outcome == EntryOutcome::built ? &inputs_ : nullptr);
    }
    return result_;
  }

 private:
  // ---- the phases, in order; each returns false when the entry ends there ----

  bool find_toolchain() {
    phase("toolchain");
    // A matrix that names no such toolkit is wrong whatever the machine: fails before the rest.
    if (!toolkit_declared(m_, e_, o_)) {
      return fail(EntryOutcome::build_failed,
                  fmt::format("CUDA {} is not in matrix.yaml", e_.cuda.str()));
    }
    auto python = find_entry_python(m_, e_, o_);
    if (!python) return fail(unavailable(), python.error().message);
    python_ = python->python;
    python_version_ = python->version;
    if (python->version != e_.python) {
      note(
          fmt::format("Python {} is not here; the {} wheel serves every Python, so Python {} "
                      "builds it",
                      e_.python.str(), e_.abi_name(), python->version.str()));
    }
    auto toolkit =
        find_entry_toolkit(m_, e_, o_, python_, true, [this](const std::string& l) { note(l); });
    if (!toolkit) return fail(unavailable(), toolkit.error().message);
    toolkit_ = *toolkit;
    note(fmt::format("Python {}: {}; CUDA {}: {}", python_version_.str(), python_.string(),
                     toolkit_.version, toolkit_.origin));
    return true;
  }

  // A toolchain this machine lacks: a failure, or with --skip-unavailable a skipped entry.
  EntryOutcome unavailable() const {
    return o_.skip_unavailable ? EntryOutcome::skipped : EntryOutcome::build_failed;
  }

  bool prepare_environment() {
    phase("environment");
    toolchain::EnvironmentRequest request{
        python_,  python_version_, e_.torch,    m_.package.build_requires,
        o_.torch, o_.cache,        log_.sink(), [this](const std::string& l) { note(l); }};
    auto env = toolchain::prepare_environment(request);
    if (!env) return fail(EntryOutcome::build_failed, env.error().message);
    env_ = *env;
    note(fmt::format("torch {} (CUDA {}): {}{}", env_.torch_version, env_.torch_cuda, env_.origin,
                     env_.reused ? " (reused)" : ""));
    const auto torch_cuda = Version::parse(env_.torch_cuda);
    if (e_.abi == matrix::Abi::stable) {
      // The stable binding shares no CUDA type with torch (its CUDA runtime is its own): torch's
      // CUDA build does not matter for building it.
      note(
          fmt::format("the stable ABI binding is built against torch {}'s headers; its CUDA {} "
                      "build does not bind the wheel's CUDA {}",
                      env_.torch_version, env_.torch_cuda, e_.cuda.str()));
    } else if (!torch_cuda || torch_cuda->major() != e_.cuda.major()) {
      return fail(EntryOutcome::build_failed,
                  fmt::format("torch {} from {} is a CUDA {} build, but the entry is CUDA {}: the "
                              "major versions must agree; give --torch-index-url for the CUDA {} "
                              "variant",
                              env_.torch_version, env_.origin, env_.torch_cuda, e_.cuda.str(),
                              e_.cuda.major()));
    } else if (torch_cuda->minor() != e_.cuda.minor()) {
      note(
          fmt::format("torch {} is a CUDA {} build; the kernels are compiled with CUDA {} "
                      "(same major version: compatible)",
                      env_.torch_version, env_.torch_cuda, toolkit_.version));
    }
    return true;
  }

  // The wheel's inputs; true when the wheel in dist/ was built from exactly these.
  bool record_inputs() {
    if (m_.package.kernels) {
      kernel_inputs_ =
          KernelInputs{o_.root, *m_.package.kernels, toolkit_, e_.archs,
                       user_settings_from_environment(m_.package.kernels->user_settings)};
      auto key = kernel_key(*kernel_inputs_);
      if (!key) return fail(EntryOutcome::build_failed, key.error().message);
      kernel_key_ = *key;
      inputs_.values["kernels"] = key->name;
    }
    nlohmann::json environment = nlohmann::json::object();
    for (const auto& [name, value] : package_environment(m_, e_))
      environment[name] = value;
    inputs_.values.update(
        nlohmann::json{{"package", package_sources_digest(o_.root / m_.package.source_dir)},
                       {"build_command", m_.package.build_command},
                       {"build_environment", environment},
                       {"binding", binding_settings(m_, e_)},
                       {"python", env_.python.string()},
                       {"torch", env_.torch_version},
                       {"version", o_.package_version},
                       {"source_date_epoch", o_.source_date_epoch},
                       {"commit", o_.git ? o_.git->commit : ""},
                       {"dirty", o_.git ? o_.git->dirty : false},
                       {"sagebuild", SAGEBUILD_VERSION}});
    const std::string text = json_text(inputs_.values);
    inputs_.digest =
        to_hex(sha256({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}));
    return true;
  }

  bool up_to_date() {
    if (o_.force || o_.reproducibility_run) return false;
    const auto recorded = read_recorded_build(o_.root, e_.id);
    if (!recorded || !recorded->result.ok()) return false;
    if (recorded->inputs.digest != inputs_.digest) {
      // Say why, like ninja -d explain: which inputs differ from the last build's.
      const std::vector<std::string> changed = changed_inputs(recorded->inputs, inputs_);
      note(changed.empty()
               ? std::string("rebuilding: no record of the last build's inputs")
               : "rebuilding: changed since the last build: " + text::join(changed, ", "));
      return false;
    }
    const stdfs::path wheel = dist() / recorded->result.wheel.filename();
    auto digest = sha256_file(wheel);
    if (!digest || to_hex(digest->digest) != recorded->result.sha256) return false;
    end_phase();
    result_.outcome = EntryOutcome::up_to_date;
    result_.wheel = wheel;
    result_.sha256 = recorded->result.sha256;
    result_.size = digest->size;
    result_.kernels = recorded->result.kernels;
    result_.checks = recorded->result.checks;
    result_.python = recorded->result.python;
    result_.cuda = recorded->result.cuda;
    result_.message = fmt::format("{} is up to date (same sources, toolchain and torch)",
                                  wheel.filename().string());
    return true;
  }

  KernelBuildOptions cache_options() {
    // What the cache holds is shared: the entries that need it wait for it, so its compile gets
    // every compile process (an entry's own, without the cache, gets the entry's share).
    return {o_.kernel_cache ? o_.cache : stdfs::path(),
            work(),
            o_.kernel_cache ? budget_.total : budget_.parallel,
            budget_.nvcc_threads,
            log_.sink(),
            log_.path(),
            [this](const std::string& l) { note(l); },
            compiler_launcher(o_),
            launcher_environment()};
  }

  bool build_kernels() {
    if (!kernel_inputs_) return true;  // the package declares none: the build compiles all
    phase("kernels");
    auto kernels = kernel_library(*kernel_inputs_, *kernel_key_, cache_options());
    if (!kernels) return fail(EntryOutcome::build_failed, kernels.error().message);
    prebuilt_.kernels = kernels->prefix;
    kernels_key_ = kernels->key;
    result_.kernels = kernels->key;
    result_.kernel_cache_hit = kernels->cache_hit;
    return true;
  }

  // The binding once per torch release (not with --no-cache: then each wheel compiles it; its
  // key is recorded all the same).
  bool build_binding() {
    if (!m_.package.binding || prebuilt_.kernels.empty()) return true;
    BindingInputs inputs{o_.root,
                         *m_.package.binding,
                         m_.package.kernels->handoff,
                         env_.python,
                         env_.torch_version,
                         e_.abi,
                         prebuilt_.kernels,
                         kernels_key_,
                         toolkit_.root,
                         binding_settings(m_, e_),
                         package_environment(m_, e_)};
    auto key = binding_key(inputs);
    if (!key) return fail(EntryOutcome::build_failed, key.error().message);
    binding_key_ = key->name;
    if (!o_.kernel_cache) return true;
    phase("binding");
    auto binding = binding_library(inputs, *key, cache_options());
    if (!binding) return fail(EntryOutcome::build_failed, binding.error().message);
    prebuilt_.binding = binding->library;
    return true;
  }

  bool build_wheel() {
    phase("wheel");
    std::error_code ec;
    const stdfs::path backend_out = work() / "backend";
    stdfs::remove_all(backend_out, ec);
    stdfs::create_directories(backend_out, ec);
    // A fresh build directory: a CMake cache left by an earlier build of this entry would keep
    // settings this one does not give (a prebuilt binding's path, say), and with them its files.
    stdfs::remove_all(work() / "cmake", ec);
    const std::vector<std::string> argv = build_command_argv(m_, o_.root, env_.python, backend_out);
    if (argv.empty())
      return fail(EntryOutcome::build_failed, "matrix.yaml has no package.build_command");
    Settings environment =
        wheel_build_environment(m_, e_, o_, toolkit_, prebuilt_, work(), budget_.parallel);
    for (auto& setting : launcher_environment())
      environment.push_back(std::move(setting));
    auto built = platform::run_process(argv, {.working_directory = o_.root,
                                              .environment = environment,
                                              .timeout = std::chrono::hours(2),
                                              .keep_output = 4096,
                                              .log = log_.sink()});
    if (!built) return fail(EntryOutcome::build_failed, built.error().message);
    if (!built->ok()) {
      return fail(
          EntryOutcome::build_failed,
          fmt::format("the wheel build of {} failed ({}); log: {}\n{}", e_.id, built->describe(),
                      result_.log.string(), text::last_lines(built->output, 12)));
    }
    for (const auto& f : stdfs::directory_iterator(backend_out, ec)) {
      if (f.path().extension() == ".whl") produced_ = f.path();
    }
    if (produced_.empty()) {
      return fail(EntryOutcome::build_failed, fmt::format("the build of {} produced no wheel in {}",
                                                          e_.id, backend_out.string()));
    }
    return true;
  }

  // The tags the wheel is published under: the entry's, unless its binaries miss the manylinux
  // policy its platform tag names; then the platform's fallback tag, and the reason is said.
  bool choose_tags() {
    const wheel::WheelIdentity identity = identity_of(e_);
    tags_ = identity.tags;
    const wheel::LinuxPolicy* policy = wheel::policy_for_tag(e_.platform_tag);
    if (!policy || !identity.fallback_tags) return true;  // verification judges it
    auto violations = wheel::wheel_policy_violations(produced_, *policy);
    if (!violations) return fail(EntryOutcome::build_failed, violations.error().message);
    if (violations->empty()) return true;
    tags_ = *identity.fallback_tags;
    platform_note_ = fmt::format("tagged {}, not {}: {}", e_.fallback_platform_tag, e_.platform_tag,
                                 text::join(*violations, "; "));
    note(platform_note_);
    return true;
  }

  bool verify_and_deliver() {
    phase("verify");
    if (!choose_tags()) return false;
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
    p.abi = e_.abi_name();
    p.cuda = toolkit_.version;
    p.python = python_version_.str();  // for a stable-ABI wheel, the one that built it
    p.platform_tag = tags_.platform;
    p.archs = e_.archs;
    p.flags = {"TORCH_CUDA_ARCH_LIST=" + e_.arch_list(),
               "SOURCE_DATE_EPOCH=" + std::to_string(o_.source_date_epoch)};
    if (!kernels_key_.empty()) p.flags.push_back("kernels=" + kernels_key_);
    if (!binding_key_.empty()) p.flags.push_back("binding=" + binding_key_);
    result_.python = p.python;
    result_.cuda = p.cuda;
    if (kernel_inputs_) {
      for (const std::string& setting : kernel_inputs_->user_settings)
        p.flags.push_back("SKBUILD_CMAKE_DEFINE=" + setting);
    }
    WheelToFinish finish{
        produced_, work() / "out",       dist(), identity_of(e_).build_tag, o_.package_version,
        tags_,     o_.source_date_epoch, p,      expected_build(e_)};
    if (o_.import_test) {
      InstallCheckOptions check{.python = env_.python, .check = m_.package.import_check};
      finish.import_tester = [check](const stdfs::path& wheel, const wheel::ImportRequest& r) {
        return run_install_check(wheel, r, check);
      };
    }
    std::ostringstream report;
    const FinishedWheel finished = finish_wheel(finish, report);
    log_.text(report.str());
    if (finished.outcome == FinishedWheel::Outcome::verification_failed) {
      result_.wheel = finished.wheel;
      return fail(EntryOutcome::verification_failed,
                  finished.message + (platform::stop_requested() ? "" : "\n" + finished.findings));
    }
    if (finished.outcome != FinishedWheel::Outcome::moved) {
      return fail(EntryOutcome::build_failed, finished.message);
    }
    end_phase();
    result_.outcome = EntryOutcome::built;
    result_.wheel = finished.wheel;
    result_.sha256 = finished.sha256;
    result_.size = finished.size;
    result_.checks = finished.checks;
    result_.message =
        fmt::format("{} ({:.1f} MB, {} checks passed{})", finished.wheel.filename().string(),
                    static_cast<double>(finished.size) / 1e6, finished.checks,
                    platform_note_.empty() ? "" : "; " + platform_note_);
    return true;
  }

  void execute() {
    // The toolchain first: a missing toolkit is found out in a second, before gigabytes of
    // torch are downloaded for nothing.
    if (!find_toolchain() || !prepare_environment() || !record_inputs()) return;
    if (up_to_date()) return;
    std::error_code ec;
    stdfs::remove(stats_log(), ec);  // this build's compiles only
    // ccache writes its statistics log only into a folder that exists: in a fresh checkout (a
    // CI clone, a container's /src) nothing else has made it before the kernels compile.
    stdfs::create_directories(work(), ec);
    const bool built = build_kernels() && build_binding() && build_wheel();
    report_compile_cache();
    if (built) verify_and_deliver();
  }

  // What ccache did for this entry's compiles (kernels, when this entry compiled them; binding;
  // wheel), in the progress and the results; remote storage errors as a warning: the build went
  // on, compiling locally.
  void report_compile_cache() {
    auto text = fs::read_file(stats_log());
    if (!text) return;  // no launcher, sccache, or nothing compiled
    result_.compile_cache = parse_ccache_stats_log(*text);
    for (const std::string& line : compile_cache_notes(result_.compile_cache))
      note(line);
  }

  // ---- bookkeeping ----

  void phase(const std::string& name) {
    end_phase();
    current_phase_ = name;
    phase_start_ = Clock::now();
    log_.phase(name);
  }
  void end_phase() {
    if (!current_phase_.empty()) {
      result_.phases.push_back({current_phase_, seconds_since(phase_start_)});
      current_phase_.clear();
    }
  }
  void note(const std::string& line) { log_.note(line); }
  bool fail(EntryOutcome outcome, const std::string& message) {
    failed_phase_ = current_phase_.empty() ? "planning" : current_phase_;
    failed_ = true;
    end_phase();
    result_.outcome = outcome;
    result_.message = message;
    log_.line("sagebuild: error: " + message);
    return false;
  }

  std::string suffix() const { return o_.reproducibility_run ? "-again" : ""; }
  stdfs::path stats_log() const { return work() / "ccache-stats.log"; }
  // What every compile of this entry runs with for the launcher: its statistics log.
  Settings launcher_environment() const {
    return compile_cache_environment(compiler_launcher(o_), stats_log());
  }
  stdfs::path work() const { return o_.root / "build" / "sagebuild" / (e_.id + suffix()); }
  stdfs::path dist() const { return o_.dist.is_absolute() ? o_.dist : o_.root / o_.dist; }

  const matrix::Matrix& m_;
  const matrix::Entry& e_;
  const BuildOptions& o_;
  const BuildBudget& budget_;
  EntryLog log_;  // result_.log, once the run ends
  EntryResult result_;
  std::string current_phase_;
  std::string failed_phase_ = "planning";
  bool failed_ = false;
  Clock::time_point phase_start_;
  // What the phases hand on.
  stdfs::path python_;
  Version python_version_ = *Version::parse("0");
  toolchain::CudaToolkitPath toolkit_;
  toolchain::BuildEnvironment env_;
  std::optional<KernelInputs> kernel_inputs_;
  std::optional<CacheKey> kernel_key_;
  BuildInputs inputs_;
  Prebuilt prebuilt_;
  std::string kernels_key_, binding_key_;
  stdfs::path produced_;
  wheel::WheelTags tags_;
  std::string platform_note_;  // why the wheel has its platform's fallback tag
};

}  // namespace

BuildBudget budget_for(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions& options) {
  std::size_t kernel_files = 0;
  if (m.package.kernels) {
    for (const std::string& f : part_sources(options.root, *m.package.kernels))
      kernel_files += f.ends_with(".cu") ? 1 : 0;
  }
  std::size_t archs = 1;
  for (const auto& e : entries)
    archs = std::max(archs, e.archs.size());
  return plan_budget(options.jobs, entries.size(), std::thread::hardware_concurrency(),
                     available_memory_gb(), kernel_files, archs);
}

std::vector<EntryResult> build_entries(const matrix::Matrix& m,
                                       const std::vector<matrix::Entry>& entries,
                                       const BuildOptions& options, Status& status, Log& log) {
  const BuildBudget budget = budget_for(m, entries, options);
  log.info("sagebuild: {}\n", budget.why);

  std::vector<EntryResult> results(entries.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < entries.size(); i = next++) {
      if (platform::stop_requested()) {
        results[i].id = entries[i].id;
        results[i].outcome = EntryOutcome::not_started;
        results[i].message = "not started (interrupted)";
        continue;
      }
      results[i] = EntryRun(m, entries[i], options, budget, status).run();
      const EntryResult& r = results[i];
      std::string line =
          r.ok() ? r.message : fmt::format("{}: {}", outcome_name(r.outcome), r.message);
      if (!r.ok() && r.outcome != EntryOutcome::interrupted)
        line += fmt::format("\n  full log: {}", r.log.string());
      status.finished(r.id, r.ok(), fmt::format("{} ({:.0f} s)", line, r.seconds));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < budget.jobs; ++t)
    threads.emplace_back(worker);
  for (auto& t : threads)
    t.join();
  status.stop();
  return results;
}

}  // namespace sagebuild::backend
