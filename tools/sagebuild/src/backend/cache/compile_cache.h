// What the compiler cache did for one entry's compiles. With ccache as the compilers' launcher,
// each build of an entry gets its own statistics log (CCACHE_STATSLOG: a record per compile of
// the counters it touched), read back once the entry is built: compiles served by the local
// cache, by the remote one (ccache's remote_storage, e.g. a Redis server shared by several
// machines: docs/build.md, "A compile cache shared across machines"), compiled, and remote
// storage errors (a remote that is down or slow costs a local compile and a warning, never the
// build). sccache keeps no per-compile log: its entries report no figures.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sagebuild::backend {

struct CompileCacheStats {
  int compiles = 0;       // compiler calls the cache saw
  int local_hits = 0;     // served from this machine's cache
  int remote_hits = 0;    // served from the remote storage
  int compiled = 0;       // misses: compiled (and stored)
  int uncached = 0;       // calls it does not cache (links, preprocessing, unsupported options)
  int remote_errors = 0;  // compiles whose remote storage failed or timed out
  bool empty() const { return compiles == 0; }
};

// The environment that makes `launcher` ("ccache", "sccache" or "") log to `stats_log` and
// know the compiler by its content (CCACHE_COMPILERCHECK=content).
std::vector<std::pair<std::string, std::string>> compile_cache_environment(
    std::string_view launcher, const std::filesystem::path& stats_log);

// ccache's stats log text, read into counts (records it does not know count as uncached).
CompileCacheStats parse_ccache_stats_log(std::string_view text);

// "31 compiles: 31 from the remote cache" and the like; "" when the cache saw nothing.
std::string describe(const CompileCacheStats& stats);

// What an entry's progress says about its compiles: "compile cache: <describe>", and a warning
// naming the remote (credentials masked) when remote storage failed; nothing when the cache saw
// nothing. The same lines for a native build and for one inside a container.
std::vector<std::string> compile_cache_notes(const CompileCacheStats& stats);

// Where ccache's remote storage is configured ($CCACHE_REMOTE_STORAGE), fit to print (its
// credentials masked); "" when it is not set there.
std::string remote_storage_for_display();

}  // namespace sagebuild::backend
