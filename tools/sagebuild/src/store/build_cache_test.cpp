#include "store/build_cache.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "platform/file_lock.h"
#include "util/fs.h"

namespace sagebuild::store {
namespace {

namespace stdfs = std::filesystem;
using std::chrono::hours;
using std::chrono::seconds;

// An entry as BuildCache::take leaves it: the directory with `bytes` of files and its lock
// file, last used `age` ago.
void make_entry(const stdfs::path& dir, std::size_t bytes, seconds age) {
  stdfs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "data", std::ios::binary) << std::string(bytes, 'x');
  const stdfs::path lock = dir.string() + ".lock";
  std::ofstream(lock).flush();
  stdfs::last_write_time(lock, stdfs::file_time_type::clock::now() - age);
}

TEST_CASE("the cache lists its entries by last use, with sizes", "[cache]") {
  fs::TempDir dir("sagebuild-cache");
  const stdfs::path root = dir.path();
  make_entry(root / "envs" / "cp312-torch2.11.0-aa", 3000, hours(24 * 40));
  make_entry(root / "kernels" / "cuda13.0-bb", 2000, hours(2));
  make_entry(root / "cuda" / "12.9" / "toolkit", 5000, hours(24 * 3));
  stdfs::create_directories(root / "kernels" / "cuda13.0-cc.tmp-0badf00d");
  stdfs::create_directories(root / "bindings" / "not-an-entry");  // no lock: not listed
  // A link to "/" named like an entry's lock is never followed (where links can be made:
  // Windows gives them to privileged accounts only).
  std::error_code no_links;
  stdfs::create_symlink("/", root / "envs" / "link.lock", no_links);

  const auto entries = BuildCache(root).list();
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].name == "envs/cp312-torch2.11.0-aa");
  CHECK(entries[0].kind == "envs");
  CHECK(entries[0].bytes == 3000);
  CHECK(entries[1].name == "cuda/12.9/toolkit");
  CHECK(entries[1].kind == "cuda");
  CHECK(entries[2].name == "kernels/cuda13.0-bb");
  CHECK(entries[3].incomplete);
  CHECK(BuildCache(root / "nonexistent").list().empty());
}

TEST_CASE("prune removes by age, then least recently used past a size", "[cache]") {
  std::vector<CacheEntry> entries = {
      {"envs", "envs/old", "/x/envs/old", 3000, hours(24 * 40), false},
      {"cuda", "cuda/12.9/toolkit", "/x/cuda/12.9/toolkit", 5000, hours(24 * 3), false},
      {"kernels", "kernels/new", "/x/kernels/new", 2000, hours(2), false},
      {"kernels", "kernels/k.tmp-1", "/x/kernels/k.tmp-1", 10, seconds(30), true},
  };
  auto names = [](const std::vector<CacheEntry>& v) {
    std::vector<std::string> n;
    for (const auto& e : v)
      n.push_back(e.name);
    return n;
  };
  CHECK(names(BuildCache::plan_prune(entries, {.older_than = hours(24 * 30)})) ==
        std::vector<std::string>{"envs/old"});
  // 7,100 bytes may stay: the oldest go first until the rest fit.
  CHECK(names(BuildCache::plan_prune(entries, {.max_bytes = 7100})) ==
        std::vector<std::string>{"envs/old"});
  CHECK(names(BuildCache::plan_prune(entries, {.max_bytes = 2500})) ==
        std::vector<std::string>{"envs/old", "cuda/12.9/toolkit"});
  // A young staging directory may be a fill in progress: left; an old one goes.
  CHECK(BuildCache::plan_prune(entries, {}).empty());
  entries[3].age = hours(5);
  CHECK(names(BuildCache::plan_prune(entries, {})) == std::vector<std::string>{"kernels/k.tmp-1"});
  CHECK(BuildCache::plan_prune(entries, {.all = true}).size() == 4);
}

TEST_CASE("an environment goes with the torch runtime it needs", "[cache]") {
  fs::TempDir dir("sagebuild-cache");
  const stdfs::path root = dir.path();
  const stdfs::path runtime = root / "torch-runtime" / "8a26";
  make_entry(runtime, 4000, hours(24 * 40));
  const stdfs::path env = root / "envs" / "cp312-torch2.11.0-aa";
  make_entry(env, 1000, hours(1));
  stdfs::create_directories(env / "lib" / "python3.12" / "site-packages");
  // The filler knows what an entry needs (toolchain::shared_runtime_of for environments).
  const NeedsOf needs_of = [&](const stdfs::path& p) -> std::optional<stdfs::path> {
    if (p == env) return runtime;
    return std::nullopt;
  };
  const auto entries = BuildCache(root).list(needs_of);
  REQUIRE(entries.size() == 2);
  CHECK(entries[1].needs == "torch-runtime/8a26");
  const auto doomed = BuildCache::plan_prune(entries, {.older_than = hours(24 * 30)});
  REQUIRE(doomed.size() == 2);
  CHECK(doomed[0].name == "torch-runtime/8a26");
  CHECK(doomed[1].name == "envs/cp312-torch2.11.0-aa");
}

TEST_CASE("removing an entry leaves nothing half made and spares one in use", "[cache]") {
  fs::TempDir dir("sagebuild-cache");
  const stdfs::path entry = dir.path() / "kernels" / "cuda13.0-bb";
  make_entry(entry, 100, hours(1));
  auto listed = BuildCache(dir.path()).list();
  REQUIRE(listed.size() == 1);
  {
    auto held = platform::FileLock::acquire(entry.string() + ".lock");
    REQUIRE(held);
    auto refused = BuildCache::remove(listed[0]);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message == "kernels/cuda13.0-bb: in use by another sagebuild run; left");
    CHECK(stdfs::exists(entry / "sub" / "data"));
  }
  REQUIRE(BuildCache::remove(listed[0]));
  CHECK_FALSE(stdfs::exists(entry));
  CHECK(stdfs::exists(entry.string() + ".lock"));  // kept: see BuildCache::remove
  CHECK(BuildCache(dir.path()).list().empty());
}

TEST_CASE("a staging directory a running build holds is told from one left over", "[cache]") {
  fs::TempDir dir("sagebuild-cache");
  const stdfs::path entry = dir.path() / "envs" / "cp312-torch2.11.0-aa";
  const stdfs::path staging = entry.string() + ".tmp-00000000";
  stdfs::create_directories(staging);
  stdfs::last_write_time(staging, stdfs::file_time_type::clock::now() - hours(2));
  {
    auto held = platform::FileLock::acquire(entry.string() + ".lock");  // a fill in progress
    REQUIRE(held);
    auto listed = BuildCache(dir.path()).list();
    REQUIRE(listed.size() == 1);
    CHECK(listed[0].incomplete);
    CHECK(listed[0].being_made);
    CHECK(BuildCache::plan_prune(listed, {}).empty());  // not taken for left over, however old
  }
  auto listed = BuildCache(dir.path()).list();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].incomplete);
  CHECK_FALSE(listed[0].being_made);
  CHECK(BuildCache::plan_prune(listed, {}).size() == 1);  // left over and an hour old: pruned
}

TEST_CASE("a build marks the entries it takes as used", "[cache]") {
  fs::TempDir dir("sagebuild-cache");
  const BuildCache cache(dir.path());
  const Fill fill{"done", [](const stdfs::path& staging) -> Expected<Ok> {
                    stdfs::create_directories(staging);
                    std::ofstream(staging / "done").flush();
                    return Ok{};
                  }};
  auto made = cache.take(CacheKind::envs, "e", fill);
  REQUIRE(made);
  CHECK_FALSE(made->hit);
  CHECK(made->path == dir.path() / "envs" / "e");
  const stdfs::path lock = made->path.string() + ".lock";
  stdfs::last_write_time(lock, stdfs::file_time_type::clock::now() - hours(24 * 10));
  CHECK(BuildCache(dir.path()).list().at(0).age >= hours(24 * 10));
  auto again = cache.take(CacheKind::envs, "e", fill);
  REQUIRE(again);
  CHECK(again->hit);
  CHECK(BuildCache(dir.path()).list().at(0).age < hours(1));
}

TEST_CASE("two fills of one entry at once: one fills, the other waits and takes it", "[cache]") {
  fs::TempDir dir("sagebuild-cache");
  const BuildCache cache(dir.path());
  const stdfs::path entry = cache.path(CacheKind::kernels, "k");
  std::atomic<bool> filling{false}, release{false}, waited{false};
  std::atomic<int> fills{0};
  stdfs::path staged;  // written by the filling thread, read after the join
  auto fill = [&](const stdfs::path& staging) -> Expected<Ok> {
    ++fills;
    staged = staging;
    filling = true;
    while (!release)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stdfs::create_directories(staging);
    std::ofstream(staging / "done").flush();
    return Ok{};
  };
  Expected<Taken> first = Error{""}, second = Error{""};
  std::thread a([&] { first = cache.take(CacheKind::kernels, "k", {"done", fill}); });
  while (!filling)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread b([&] {
    second = cache.take(CacheKind::kernels, "k", {"done", fill, [&] {
                                                    waited = true;
                                                    // the first may finish now that the second
                                                    // is seen waiting
                                                    release = true;
                                                  }});
  });
  a.join();
  b.join();
  REQUIRE(first);
  REQUIRE(second);
  CHECK_FALSE(first->hit);  // made it
  CHECK(second->hit);       // took it
  CHECK(waited);
  CHECK(fills == 1);
  CHECK(staged == stdfs::path(entry.string() + ".tmp-00000000"));  // one fixed name
  CHECK(stdfs::exists(entry / "done"));
  CHECK_FALSE(stdfs::exists(entry.string() + ".tmp-00000000"));
}

TEST_CASE("each kind of entry has its own directory, the one list() reports", "[cache]") {
  fs::TempDir dir("sagebuild-cache");
  const BuildCache cache(dir.path());
  std::set<std::string_view> seen;
  for (const CacheKindInfo& k : kCacheKinds) {
    INFO(k.directory);
    CHECK(seen.insert(k.directory).second);
    CHECK(directory_of(k.kind) == k.directory);
    auto taken = cache.take(k.kind, "x", {"done", [](const stdfs::path& staging) -> Expected<Ok> {
                                            stdfs::create_directories(staging);
                                            std::ofstream(staging / "done").flush();
                                            return Ok{};
                                          }});
    REQUIRE(taken);
    CHECK(taken->path == dir.path() / k.directory / "x");
  }
  const auto listed = cache.list();
  REQUIRE(listed.size() == std::size(kCacheKinds));
  for (const CacheEntry& e : listed)
    CHECK(seen.count(e.kind) == 1);
}

TEST_CASE("ages and sizes read as people write them", "[cache]") {
  CHECK(*parse_age("30d") == hours(24 * 30));
  CHECK(*parse_age("12h") == hours(12));
  CHECK(*parse_age("2w") == hours(24 * 14));
  CHECK(*parse_age("90m") == seconds(90 * 60));
  CHECK(*parse_age("7") == hours(24 * 7));
  CHECK(parse_age("99999999999999w"));  // clamped, not overflowed
  CHECK_FALSE(parse_age("soon"));
  CHECK_FALSE(parse_age("-3d"));
  CHECK(parse_age("3y").error().message.find("like 30d, 12h") != std::string::npos);
  CHECK(*parse_size("20G") == 20'000'000'000ULL);
  CHECK(*parse_size("1.5T") == 1'500'000'000'000ULL);
  CHECK(*parse_size("500MB") == 500'000'000ULL);
  CHECK(*parse_size("8GiB") == 8'000'000'000ULL);
  CHECK(*parse_size("4096") == 4096);
  CHECK_FALSE(parse_size("lots"));
  CHECK_FALSE(parse_size("12Q"));
  CHECK_FALSE(parse_size("99999999999T"));
  CHECK(describe_size(7'200'000'000ULL) == "7.2 GB");
  CHECK(describe_size(27'000'000ULL) == "27 MB");
  CHECK(describe_age(hours(72)) == "3 days");
  CHECK(describe_age(seconds(5)) == "just now");
}

}  // namespace
}  // namespace sagebuild::store
