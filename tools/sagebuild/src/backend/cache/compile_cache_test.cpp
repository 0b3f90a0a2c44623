#include "backend/cache/compile_cache.h"

#include <catch2/catch.hpp>

#include "test_support.h"

namespace sagebuild::backend {
namespace {

// Records as ccache 4.7 writes them to CCACHE_STATSLOG (one compile each).
constexpr const char* kLog = R"(# /src/kernels/src/quantize/quantize.cu
cache_miss
direct_cache_miss
local_storage_miss
local_storage_read_miss
local_storage_write
preprocessed_cache_miss
remote_storage_miss
remote_storage_read_miss
remote_storage_write
# /src/kernels/src/api.cpp
direct_cache_hit
local_storage_hit
local_storage_read_hit
# /src/kernels/src/instantiations/attention_sm90_f16_d128.cu
direct_cache_hit
local_storage_miss
local_storage_write
remote_storage_hit
remote_storage_read_hit
# /src/python/csrc/binding.cpp
cache_miss
direct_cache_miss
local_storage_miss
preprocessed_cache_miss
remote_storage_error
# /src/kernels/src/instantiations/attention_fp16_f16_d64.cu
cache_miss
direct_cache_miss
local_storage_miss
preprocessed_cache_miss
remote_storage_hit
remote_storage_read_hit
remote_storage_write
# CMakeFiles/x.dir/link.txt
called_for_link
)";

TEST_CASE("ccache's statistics log gives each compile its outcome", "[compile-cache]") {
  const CompileCacheStats s = parse_ccache_stats_log(kLog);
  CHECK(s.compiles == 6);
  CHECK(s.compiled == 3);  // the last .cu: the remote answered, its entry was refused
  CHECK(s.local_hits == 1);
  CHECK(s.remote_hits == 1);
  CHECK(s.uncached == 1);
  CHECK(s.remote_errors == 1);
  CHECK(describe(s) ==
        "6 compiles: 1 from the local cache, 1 from the remote cache, 3 compiled, 1 not "
        "cacheable; the remote cache failed 1 time");
  CHECK(describe(parse_ccache_stats_log("")).empty());
  CHECK(parse_ccache_stats_log("cache_miss\n").empty());  // counters outside a record
  CHECK(describe(parse_ccache_stats_log("# a.cpp\r\ndirect_cache_hit\r\n")) ==
        "1 compile: 1 from the local cache");
}

TEST_CASE("only ccache is given a statistics log, and told to know the compiler by its content",
          "[compile-cache]") {
  const auto env = compile_cache_environment("ccache", "/w/ccache-stats.log");
  REQUIRE(env.size() == 2);
  CHECK(env[0].first == "CCACHE_STATSLOG");
  CHECK(env[0].second == "/w/ccache-stats.log");
  CHECK(env[1] == std::pair<std::string, std::string>{"CCACHE_COMPILERCHECK", "content"});
  CHECK(compile_cache_environment("sccache", "/w/x").empty());
  CHECK(compile_cache_environment("", "/w/x").empty());
}

TEST_CASE("the remote storage is shown without its password", "[compile-cache]") {
  {
    const testing::ScopedEnv remote("CCACHE_REMOTE_STORAGE",
                                    "redis://:s3cret@cache.example:6379|connect-timeout=50 "
                                    "file:///mnt/cache");
    const std::string shown = remote_storage_for_display();
    CHECK(shown == "redis://:***@cache.example:6379|connect-timeout=50 file:///mnt/cache");
    CHECK(shown.find("s3cret") == std::string::npos);
  }
  const testing::ScopedEnv unset("CCACHE_REMOTE_STORAGE", std::nullopt);
  CHECK(remote_storage_for_display().empty());
}

TEST_CASE("an entry's compile cache notes: the figures, and a warning naming the remote",
          "[compile-cache]") {
  const testing::ScopedEnv remote("CCACHE_REMOTE_STORAGE", "redis://:pw@cache.example:6379");
  CHECK(compile_cache_notes({}).empty());
  CHECK(compile_cache_notes({.compiles = 2, .remote_hits = 2}) ==
        std::vector<std::string>{"compile cache: 2 compiles: 2 from the remote cache"});
  const auto notes = compile_cache_notes({.compiles = 3, .compiled = 3, .remote_errors = 3});
  REQUIRE(notes.size() == 2);
  CHECK(notes[1] ==
        "warning: the remote compile cache (redis://:***@cache.example:6379) failed for 3 of 3 "
        "compiles (down, unreachable or slow?): they were compiled here");
}

}  // namespace
}  // namespace sagebuild::backend
