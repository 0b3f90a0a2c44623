#include "github/summary.h"

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>

#include "util/json_text.h"
#include "util/text.h"

namespace sagebuild::github {
namespace {

// Table cells may not hold '|' or line breaks.
std::string cell(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string field(const nlohmann::json& r, const char* key) {
  if (!r.contains(key) || r[key].is_null()) return "";
  return r[key].is_string() ? r[key].get<std::string>() : json_text(r[key]);
}

// A number from a results file, or `fallback` when the field is missing or not a number of
// that kind (a results file is input: "size": "abc" must not stop the summary).
template <typename T>
T number(const nlohmann::json& r, const char* key, T fallback) {
  if (!r.contains(key)) return fallback;
  const auto& v = r[key];
  if constexpr (std::is_floating_point_v<T>) {
    return v.is_number() ? v.get<T>() : fallback;
  } else {
    return v.is_number_integer() && v.get<std::int64_t>() >= 0 ? v.get<T>() : fallback;
  }
}

// A fenced block that its text cannot close: the fence is longer than any run of backticks
// inside (CommonMark closes a fence only with one at least as long).
std::string fenced(const std::string& text, std::string_view indent) {
  std::size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  return fmt::format("{}{}\n{}{}\n{}{}\n", indent, fence, indent, text, indent, fence);
}

// The seconds of the phases that compile (kernels, binding, wheel).
double compile_seconds(const nlohmann::json& r) {
  double total = 0;
  const auto phases = r.find("phases");
  if (phases == r.end() || !phases->is_object()) return 0;
  for (const char* phase : {"kernels", "binding", "wheel"}) {
    const auto it = phases->find(phase);
    if (it != phases->end() && it->is_number()) total += it->get<double>();
  }
  return total;
}

// What the caches gave: sagebuild's kernel cache, and ccache's compiles ("31/33 hits, 31 remote").
std::string cache_cell(const nlohmann::json& r) {
  std::vector<std::string> parts;
  const auto hit = r.find("kernel_cache_hit");
  if (hit != r.end() && hit->is_boolean()) {
    parts.push_back(hit->get<bool>() ? "kernels cached" : "kernels compiled");
  }
  const auto cc = r.find("compile_cache");
  if (cc != r.end() && cc->is_object()) {
    const auto count = [&](const char* key) {
      const auto it = cc->find(key);
      return it != cc->end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
    };
    std::string hits = fmt::format("{}/{} ccache hits", count("local_hits") + count("remote_hits"),
                                   count("compiles"));
    if (count("remote_hits")) hits += fmt::format(", {} remote", count("remote_hits"));
    if (count("remote_errors")) hits += fmt::format(", {} remote errors", count("remote_errors"));
    parts.push_back(hits);
  }
  return parts.empty() ? "-" : text::join(parts, "; ");
}

}  // namespace

std::string summary_markdown(const std::vector<nlohmann::json>& results, std::size_t limit) {
  std::size_t built = 0, failed = 0;
  std::uint64_t bytes = 0;
  std::vector<std::string> rows, failures;
  for (const auto& r : results) {
    const std::string status = field(r, "status");
    if (status == "built" || status == "up_to_date") {
      ++built;
      const std::uint64_t size = number(r, "size", std::uint64_t{0});
      bytes += size;
      rows.push_back(fmt::format(
          "| `{}` | {} | {} | {} | {} | {:.1f} MB | `{}` | {:.0f} s | {:.0f} s | {} | {} |\n",
          cell(field(r, "wheel")), cell(field(r, "torch")), cell(field(r, "cuda")),
          cell(field(r, "python")), cell(field(r, "platform")), static_cast<double>(size) / 1e6,
          field(r, "sha256").substr(0, 16), number(r, "seconds", 0.0), compile_seconds(r),
          cell(cache_cell(r)),
          status == "up_to_date" ? "up to date (not rebuilt)"
                                 : fmt::format("{} checks passed", field(r, "checks"))));
    } else {
      ++failed;
      std::vector<std::string> lines = text::split(field(r, "message"), '\n');
      if (lines.size() > 5) lines.resize(5);
      failures.push_back(fmt::format("- **{}** ({}): {}\n{}", cell(field(r, "entry")),
                                     status == "verification_failed" ? "verification failed"
                                     : status == "interrupted"       ? "interrupted"
                                     : status == "not_started"       ? "not started"
                                                                     : "build failed",
                                     cell(field(r, "log")),
                                     fenced(text::join(lines, "\n  "), "  ")));
    }
  }
  std::string head = fmt::format("## sagebuild: {} wheel{} ready, {} failed ({:.1f} MB)\n\n", built,
                                 built == 1 ? "" : "s", failed, static_cast<double>(bytes) / 1e6);
  std::string table =
      "| wheel | torch | CUDA | Python | platform | size | sha256 | time | compiling | caches | "
      "verification |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  std::string out = head;
  std::size_t dropped = 0;
  auto fits = [&](const std::string& more) { return out.size() + more.size() + 256 <= limit; };
  if (!failures.empty()) {
    out += "### Failed entries\n\n";
    for (const auto& f : failures) {
      if (fits(f))
        out += f;
      else
        ++dropped;
    }
    out += "\n";
  }
  if (!rows.empty()) {
    out += "### Wheels\n\n" + table;
    for (const auto& row : rows) {
      if (fits(row))
        out += row;
      else
        ++dropped;
    }
  }
  if (dropped) {
    out += fmt::format(
        "\n*{} more entr{} left out to stay under GitHub's 1 MiB step-summary limit; "
        "see the results JSON artifacts.*\n",
        dropped, dropped == 1 ? "y" : "ies");
  }
  return out;
}

}  // namespace sagebuild::github
