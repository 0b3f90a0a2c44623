#include "backend/cache/compile_cache.h"

#include <cstdlib>

#include <fmt/format.h>

#include "util/secrets.h"
#include "util/text.h"

namespace sagebuild::backend {

std::vector<std::pair<std::string, std::string>> compile_cache_environment(
    std::string_view launcher, const std::filesystem::path& stats_log) {
  if (launcher != "ccache") return {};
  // The compiler is known by its content, not ccache's default (its modification time): a
  // toolkit provisioned from PyPI on each machine or container has its own install time, and
  // no two of them would share an object through the remote storage.
  return {{"CCACHE_STATSLOG", stats_log.string()}, {"CCACHE_COMPILERCHECK", "content"}};
}

CompileCacheStats parse_ccache_stats_log(std::string_view text) {
  CompileCacheStats stats;
  bool open = false, hit = false, remote_hit = false, miss = false, remote_error = false;
  auto close = [&] {
    if (!open) return;
    ++stats.compiles;
    // The outcome is the cache's hit or miss; remote_storage_hit only says the remote answered
    // (an entry that then fails its checksum is a miss with a remote hit, and is compiled).
    if (hit && remote_hit) {
      ++stats.remote_hits;
    } else if (hit) {
      ++stats.local_hits;
    } else if (miss) {
      ++stats.compiled;
    } else {
      ++stats.uncached;
    }
    if (remote_error) ++stats.remote_errors;
    open = hit = remote_hit = miss = remote_error = false;
  };
  for (const std::string& raw : text::split(text, '\n')) {
    const std::string_view line = text::trim(raw);
    if (line.empty()) continue;
    if (line.front() == '#') {  // "# <source>": a compile's record starts
      close();
      open = true;
      continue;
    }
    if (!open) continue;
    if (line == "direct_cache_hit" || line == "preprocessed_cache_hit") hit = true;
    if (line == "remote_storage_hit") remote_hit = true;
    if (line == "cache_miss") miss = true;
    if (line == "remote_storage_error" || line == "remote_storage_timeout") remote_error = true;
  }
  close();
  return stats;
}

std::string describe(const CompileCacheStats& s) {
  if (s.empty()) return "";
  std::vector<std::string> parts;
  if (s.local_hits) parts.push_back(fmt::format("{} from the local cache", s.local_hits));
  if (s.remote_hits) parts.push_back(fmt::format("{} from the remote cache", s.remote_hits));
  if (s.compiled) parts.push_back(fmt::format("{} compiled", s.compiled));
  if (s.uncached) parts.push_back(fmt::format("{} not cacheable", s.uncached));
  std::string out = fmt::format("{} compile{}: {}", s.compiles, s.compiles == 1 ? "" : "s",
                                text::join(parts, ", "));
  if (s.remote_errors) {
    out += fmt::format("; the remote cache failed {} time{}", s.remote_errors,
                       s.remote_errors == 1 ? "" : "s");
  }
  return out;
}

std::vector<std::string> compile_cache_notes(const CompileCacheStats& c) {
  if (c.empty()) return {};
  std::vector<std::string> notes = {"compile cache: " + describe(c)};
  if (c.remote_errors) {
    const std::string remote = remote_storage_for_display();
    notes.push_back(
        fmt::format("warning: the remote compile cache{} failed for {} of {} compiles "
                    "(down, unreachable or slow?): they were compiled here",
                    remote.empty() ? "" : " (" + remote + ")", c.remote_errors, c.compiles));
  }
  return notes;
}

std::string remote_storage_for_display() {
  const char* remote = std::getenv("CCACHE_REMOTE_STORAGE");
  if (!remote || !*remote) return "";
  // Several storages are separated by spaces; each may carry "|attribute=value" options.
  std::vector<std::string> shown;
  for (const std::string& url : text::split(remote, ' ')) {
    if (!url.empty()) shown.push_back(redact_url(url));
  }
  return text::join(shown, " ");
}

}  // namespace sagebuild::backend
