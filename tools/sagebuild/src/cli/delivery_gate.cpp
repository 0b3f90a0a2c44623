#include "cli/delivery_gate.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "cli/command.h"
#include "util/sha256.h"
#include "wheel/filename.h"

namespace sagebuild::cli {

namespace stdfs = std::filesystem;

namespace {

// A wheel without provenance (not built by sagebuild) still takes part in the ambiguity check,
// by its name alone.
registry::IndexedWheel by_name(const stdfs::path& path, const wheel::WheelFilename& name) {
  registry::IndexedWheel w;
  w.path = path;
  w.project = name.canonical_name;
  w.version = name.version.normalized;
  return w;
}

// The folders of labelled copies a killed run left behind (SIGKILL skips the clean-up), removed
// once they are a day old, when no run can still be using them.
void remove_stale_copies() {
  std::error_code ec;
  const stdfs::path temp = stdfs::temp_directory_path(ec);
  if (ec) return;
  const auto now = stdfs::file_time_type::clock::now();
  stdfs::directory_iterator it(temp, ec), end;
  for (std::size_t seen = 0; !ec && it != end && seen < 100000; it.increment(ec), ++seen) {
    const stdfs::path& path = it->path();
    if (!path.filename().string().starts_with("sagebuild-delivery-")) continue;
    std::error_code item;
    if (!it->is_directory(item) || it->is_symlink(item)) continue;
    const auto written = it->last_write_time(item);
    if (!item && now - written > std::chrono::hours(24)) stdfs::remove_all(path, item);
  }
}

// Copies each file into `dir` (created if need be). A file of the same name already there is
// left alone when it has the same bytes and refused otherwise: nothing the user had is replaced.
void keep_delivered(const std::vector<stdfs::path>& files, const stdfs::path& dir) {
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  if (ec) {
    throw CommandError{ErrorKind::publish,
                       fmt::format("--delivered-dir {}: {}", dir.string(), ec.message())};
  }
  for (const stdfs::path& file : files) {
    const stdfs::path target = dir / file.filename();
    if (stdfs::exists(target, ec)) {
      const auto have = sha256_file(target), want = sha256_file(file);
      if (have && want && have->digest == want->digest) continue;
      throw CommandError{ErrorKind::publish,
                         fmt::format("--delivered-dir: {} already holds another {}; nothing "
                                     "replaced (empty the folder or choose another)",
                                     dir.string(), file.filename().string())};
    }
    const stdfs::path partial = dir / ("." + file.filename().string() + ".partial");
    stdfs::copy_file(file, partial, stdfs::copy_options::overwrite_existing, ec);
    if (!ec) stdfs::rename(partial, target, ec);
    if (ec) {
      stdfs::remove(partial, ec);
      throw CommandError{ErrorKind::publish, fmt::format("--delivered-dir: cannot copy {} into {}",
                                                         file.filename().string(), dir.string())};
    }
  }
}

// A labelled set goes to one namespace (a registry, a release's assets): a combined surface,
// which leaves out the per-torch wheels a universal wheel also serves (registry/delivery.h).
void leave_out_of_combined(DeliverySet& set, Log& log) {
  std::vector<const registry::IndexedWheel*> wheels;
  for (const auto& w : set.wheels)
    wheels.push_back(&w);
  const registry::CombinedSurface combined = registry::combined_surface(wheels);
  if (combined.left_out.empty()) return;
  std::set<stdfs::path> dropped;
  for (const registry::LeftOut& l : combined.left_out) {
    log.info("sagebuild: left out: {}\n", registry::describe(l));
    dropped.insert(l.wheel->path);
  }
  DeliverySet kept;
  kept.labelled = std::move(set.labelled);
  for (std::size_t i = 0; i < set.files.size(); ++i) {
    if (dropped.count(set.files[i])) continue;
    kept.files.push_back(set.files[i]);
    kept.sources.push_back(set.sources[i]);
  }
  for (auto& w : set.wheels)
    if (!dropped.count(w.path)) kept.wheels.push_back(std::move(w));
  set = std::move(kept);
}

}  // namespace

void verify_before_delivery(const std::vector<stdfs::path>& files,
                            const wheel::VerifyOptions& checks, std::string_view nothing_done,
                            Log& log) {
  std::size_t failed = 0, done = 0;
  const auto wheels = static_cast<std::size_t>(std::count_if(
      files.begin(), files.end(), [](const stdfs::path& f) { return f.extension() == ".whl"; }));
  for (const stdfs::path& file : files) {
    if (file.extension() != ".whl") continue;
    // A set of large wheels takes a while: say how far it is.
    log.info("sagebuild: verifying {} ({}/{})\n", file.filename().string(), ++done, wheels);
    const wheel::WheelReport report = wheel::verify_wheel(file, checks);
    if (report.ok()) continue;
    ++failed;
    for (const wheel::Finding& f : report.findings) {
      log.error("sagebuild: {}: {} {}{}\n", file.filename().string(), f.check,
                f.where.empty() ? "" : f.where + ": ", f.message);
    }
  }
  if (failed) {
    throw CommandError{ErrorKind::verify,
                       fmt::format("{} wheel{} failed verification; {} (see `sagebuild "
                                   "verify-wheel`; --no-verify skips the check)",
                                   failed, failed == 1 ? "" : "s", nothing_done)};
  }
}

DeliverySet prepare_delivery(const std::vector<stdfs::path>& files, const GateOptions& options,
                             Log& log) {
  DeliverySet set;
  if (options.verify) verify_before_delivery(files, options.checks, "nothing uploaded", log);
  if (options.label) {
    remove_stale_copies();
    set.labelled = std::make_unique<fs::TempDir>("sagebuild-delivery");
  }
  for (const stdfs::path& file : files) {
    auto name = wheel::parse_wheel_filename(file.filename().string());
    set.sources.push_back(file);
    if (file.extension() != ".whl" || !name) {
      set.files.push_back(file);
      continue;
    }
    // A wheel sagebuild did not build has no variant to label it with: delivered as it is.
    auto described = registry::describe_wheel(file);
    if (!options.label || !described) {
      set.wheels.push_back(described ? std::move(*described) : by_name(file, *name));
      set.files.push_back(file);
      continue;
    }
    if (const std::string version = registry::delivered_version(*described);
        version != described->version) {
      log.info("sagebuild: labelling {} as {}\n", file.filename().string(), version);
    }
    auto labelled = registry::labelled_copy(*described, set.labelled->path());
    if (!labelled) throw CommandError(labelled.error().as(ErrorKind::publish));
    set.files.push_back(labelled->path);
    set.wheels.push_back(std::move(*labelled));
  }
  if (options.label) leave_out_of_combined(set, log);
  std::vector<const registry::IndexedWheel*> wheels;
  for (const auto& w : set.wheels)
    wheels.push_back(&w);
  if (const auto ambiguities = registry::find_ambiguities(wheels); !ambiguities.empty()) {
    std::string lines;
    for (const auto& a : ambiguities)
      lines += "\n  " + registry::describe(a);
    throw CommandError{
        ErrorKind::publish,
        fmt::format("nothing uploaded: pip and uv could not resolve this set{}{}", lines,
                    options.label ? ""
                                  : "\n  (--local-labels delivers each variant under its own "
                                    "local version, for a registry that accepts them)")};
  }
  if (!options.delivered_dir.empty()) keep_delivered(set.files, options.delivered_dir);
  return set;
}

void name_sources_of_failures(const DeliverySet& set, const std::vector<stdfs::path>& failed,
                              Log& log) {
  for (std::size_t i = 0; i < set.files.size() && i < set.sources.size(); ++i) {
    if (set.files[i] == set.sources[i] ||
        std::find(failed.begin(), failed.end(), set.files[i]) == failed.end()) {
      continue;
    }
    const auto digest = sha256_file(set.sources[i]);
    log.result("sagebuild: {} is the labelled copy of {}{}\n", set.files[i].filename().string(),
               set.sources[i].string(),
               digest ? fmt::format(" (that file: sha256 {}, {} bytes)", to_hex(digest->digest),
                                    digest->size)
                      : "");
  }
}

void print_dry_run(const DeliverySet& set, std::string_view verb, Log& log) {
  for (const auto& file : set.files)
    log.result("sagebuild: would {} {}\n", verb, file.filename().string());
  log.result("sagebuild: dry run: {} file{} checked, nothing uploaded\n", set.files.size(),
             set.files.size() == 1 ? "" : "s");
}

}  // namespace sagebuild::cli
