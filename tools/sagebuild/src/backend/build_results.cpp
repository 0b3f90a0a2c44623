#include "backend/build_results.h"

#include <array>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/json_text.h"
#include "util/secrets.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;

constexpr std::array<std::pair<EntryOutcome, std::string_view>, 7> kOutcomeNames = {{
    {EntryOutcome::built, "built"},
    {EntryOutcome::up_to_date, "up_to_date"},
    {EntryOutcome::build_failed, "build_failed"},
    {EntryOutcome::verification_failed, "verification_failed"},
    {EntryOutcome::interrupted, "interrupted"},
    {EntryOutcome::not_started, "not_started"},
    {EntryOutcome::skipped, "skipped"},
}};

}  // namespace

std::string_view outcome_name(EntryOutcome outcome) {
  for (const auto& [value, name] : kOutcomeNames) {
    if (value == outcome) return name;
  }
  return "unknown";
}

std::optional<EntryOutcome> parse_outcome(std::string_view name) {
  for (const auto& [value, known] : kOutcomeNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

stdfs::path results_file(const stdfs::path& root, const std::string& entry) {
  return root / "build" / "results" / (entry + ".json");
}

void write_result(const stdfs::path& root, const matrix::Entry& e, const EntryResult& r,
                  const BuildInputs* inputs) {
  nlohmann::ordered_json record = {{"entry", e.id},
                                   {"status", outcome_name(r.outcome)},
                                   {"abi", e.abi_name()},
                                   {"python", r.python.empty() ? e.python.str() : r.python},
                                   {"torch", e.torch.str()},
                                   {"cuda", r.cuda.empty() ? e.cuda_full : r.cuda},
                                   {"platform", e.platform_tag},
                                   {"archs", e.archs},
                                   {"log", r.log.string()},
                                   {"seconds", r.seconds}};
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
  if (const CompileCacheStats& c = r.compile_cache; !c.empty()) {
    record["compile_cache"] = {{"compiles", c.compiles},       {"local_hits", c.local_hits},
                               {"remote_hits", c.remote_hits}, {"compiled", c.compiled},
                               {"uncached", c.uncached},       {"remote_errors", c.remote_errors}};
  }
  nlohmann::ordered_json phases = nlohmann::ordered_json::object();
  for (const auto& ph : r.phases)
    phases[ph.phase] = ph.seconds;
  record["phases"] = phases;
  if (inputs && !inputs->digest.empty()) {
    record["inputs"] = inputs->digest;
    record["input_values"] = inputs->values;
  }
  const stdfs::path file = results_file(root, e.id);
  std::error_code ec;
  stdfs::create_directories(file.parent_path(), ec);
  // The record quotes the build's output (summary and annotations print it): masked.
  (void)fs::write_file_atomic(file, redact_environment_secrets(json_text(record, 2) + "\n"));
}

std::optional<RecordedBuild> read_recorded_build(const stdfs::path& root,
                                                 const std::string& entry) {
  return read_result_file(results_file(root, entry), entry);
}

std::optional<RecordedBuild> read_result_file(const stdfs::path& file, const std::string& entry) {
  auto text = fs::read_file(file, 4u << 20);  // a record is a few KB; a larger file is not one
  if (!text) return std::nullopt;
  const auto j = parse_json_bounded(*text);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    RecordedBuild recorded;
    EntryResult& r = recorded.result;
    r.id = entry;
    const auto outcome = parse_outcome(j.value("status", ""));
    if (!outcome) return std::nullopt;
    r.outcome = *outcome;
    r.wheel = j.value("wheel", "");
    r.sha256 = j.value("sha256", "");
    r.size = j.value("size", std::uint64_t{0});
    r.checks = j.value("checks", std::size_t{0});
    r.kernels = j.value("kernels", "");
    r.kernel_cache_hit = j.value("kernel_cache_hit", false);
    if (const auto c = j.find("compile_cache"); c != j.end() && c->is_object()) {
      r.compile_cache = {.compiles = c->value("compiles", 0),
                         .local_hits = c->value("local_hits", 0),
                         .remote_hits = c->value("remote_hits", 0),
                         .compiled = c->value("compiled", 0),
                         .uncached = c->value("uncached", 0),
                         .remote_errors = c->value("remote_errors", 0)};
    }
    r.python = j.value("python", "");
    r.cuda = j.value("cuda", "");
    r.log = j.value("log", "");
    r.seconds = j.value("seconds", 0.0);
    if (j.contains("phases") && j["phases"].is_object()) {
      for (const auto& [phase, seconds] : j["phases"].items()) {
        if (seconds.is_number()) r.phases.push_back({phase, seconds.get<double>()});
      }
    }
    recorded.inputs.digest = j.value("inputs", "");
    if (j.contains("input_values") && j["input_values"].is_object()) {
      recorded.inputs.values = j["input_values"];
    }
    return recorded;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> changed_inputs(const BuildInputs& before, const BuildInputs& now) {
  std::vector<std::string> changed;
  if (before.values.empty()) return changed;
  for (const auto& [key, value] : now.values.items()) {
    if (!before.values.contains(key) || before.values[key] != value) changed.push_back(key);
  }
  for (const auto& [key, value] : before.values.items()) {
    if (!now.values.contains(key)) changed.push_back(key);
  }
  return changed;
}

void write_last_run(const stdfs::path& root, const std::vector<std::string>& entries) {
  std::error_code ec;
  stdfs::create_directories(root / "build", ec);
  (void)fs::write_file_atomic(root / "build" / "last-run.json",
                              json_text(nlohmann::json{{"entries", entries}}, 2) + "\n");
}

std::optional<std::vector<std::string>> read_last_run(const stdfs::path& root) {
  auto text = fs::read_file(root / "build" / "last-run.json", 1u << 20);
  if (!text) return std::nullopt;
  const auto j = parse_json_bounded(*text);
  if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j["entries"].is_array()) {
    return std::nullopt;
  }
  std::vector<std::string> entries;
  for (const auto& e : j["entries"]) {
    if (e.is_string()) entries.push_back(e.get<std::string>());
  }
  return entries;
}

std::string short_reason(const std::string& message) {
  constexpr std::size_t kWidth = 60;
  std::string first = message.substr(0, message.find('\n'));
  // "no CUDA 12.9 toolkit: <where it looked>" reads as "no CUDA 12.9 toolkit".
  if (const std::size_t colon = first.find(": "); colon != std::string::npos && colon >= 8) {
    first.resize(colon);
  }
  if (first.size() > kWidth) {
    std::size_t cut = kWidth - 3;
    while (cut > 0 && (static_cast<unsigned char>(first[cut]) & 0xC0) == 0x80)
      --cut;  // not inside a UTF-8 sequence
    first = first.substr(0, cut) + "...";
  }
  return first;
}

std::string format_results(const std::vector<EntryResult>& results) {
  std::string table =
      fmt::format("{:<44} {:<20} {:>7}  {}\n", "entry", "status", "seconds", "wheel / reason");
  for (const EntryResult& r : results) {
    // The progress line above gave the full reason; the table points back to it.
    std::string what =
        r.ok() ? r.wheel.filename().string()
               : short_reason(r.message) + (short_reason(r.message) == r.message ? "" : " (above)");
    table +=
        fmt::format("{:<44} {:<20} {:>7.1f}  {}\n", r.id, outcome_name(r.outcome), r.seconds, what);
  }
  return table;
}

}  // namespace sagebuild::backend
