// The build cache (--cache-dir, $SAGEBUILD_CACHE_DIR, else ~/.cache/sagebuild): what builds share
// across entries, runs and checkouts. Whatever an entry holds, it has one life cycle, kept here
// and only here:
//   look up  <root>/<kind>/<name>, whole when it holds its marker file
//   fill     made once, safely when several runs share the cache: under "<entry>.lock" the
//            filler writes the staging directory "<entry>.tmp-00000000" (one fixed name, so that
//            what is compiled there has the same paths on every machine), renamed into place;
//            a failed or interrupted fill leaves nothing
//   use      each take marks the entry used (the lock file's time)
//   list     each entry with its size and last use; prune by age or size, least recently used
//            first, an entry going with the one it needs; remove renames aside first, so that no
//            run sees an entry half removed
// The compile cache (ccache, sccache) is a tool's own store beside this one:
// backend/cache/compile_cache.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace sagebuild::store {

// What the cache holds, one directory per kind, and who fills it.
enum class CacheKind { envs, torch_runtime, cuda, kernels, bindings };
struct CacheKindInfo {
  CacheKind kind;
  std::string_view directory;
  std::string_view holds;
};
inline constexpr CacheKindInfo kCacheKinds[] = {
    {CacheKind::envs, "envs", "an entry's Python environment with torch (toolchain/environment)"},
    {CacheKind::torch_runtime, "torch-runtime", "torch's CUDA runtime wheels, shared by envs"},
    {CacheKind::cuda, "cuda", "CUDA toolkits provisioned from PyPI (toolchain/cuda)"},
    {CacheKind::kernels, "kernels", "the compiled kernel library (backend/cache/kernel_cache)"},
    {CacheKind::bindings, "bindings", "the compiled torch binding (backend/cache/kernel_cache)"},
};
std::string_view directory_of(CacheKind kind);

// How take() makes an entry that is not there.
struct Fill {
  std::string marker;  // the file whose presence says the entry is whole
  std::function<Expected<Ok>(const std::filesystem::path& staging)> fill;
  std::function<void()> waiting = {};  // called once if another run is filling it
};

struct Taken {
  std::filesystem::path path;
  bool hit = false;  // it was there (false: this call filled it)
};

struct CacheEntry {
  std::string kind;            // the top directory: "envs", "kernels", "cuda", ...
  std::string name;            // relative to the cache: "envs/cp312-torch2.11.0-29c3c150d0f9bccb"
  std::filesystem::path path;  // the entry's directory
  std::uint64_t bytes = 0;     // its regular files (symbolic links not followed)
  std::chrono::seconds age{};  // since its last use
  bool incomplete = false;     // a staging directory, not a finished entry
  bool being_made = false;     // incomplete, and a running build holds its lock: not left over
  std::string needs = {};      // the entry this one cannot work without (an env's torch-runtime)
};

struct PrunePolicy {
  bool all = false;                                               // every entry
  std::optional<std::chrono::seconds> older_than = std::nullopt;  // unused for longer than this
  std::optional<std::uint64_t> max_bytes = std::nullopt;          // then LRU until the rest fit
};

// The entry an entry cannot work without, if any, as its filler knows it (toolchain: an
// environment reaches its torch runtime through a .pth file).
using NeedsOf = std::function<std::optional<std::filesystem::path>(const std::filesystem::path&)>;

class BuildCache {
 public:
  explicit BuildCache(std::filesystem::path root) : root_(std::move(root)) {}
  const std::filesystem::path& root() const { return root_; }

  // Where a kind's entries live, and where an entry does ("13.0/toolkit" for a cuda entry:
  // names may have levels).
  std::filesystem::path directory(CacheKind kind) const;
  std::filesystem::path path(CacheKind kind, std::string_view name) const;
  // Looks the entry up and, when it is not whole, fills it (above); either way marks it used.
  Expected<Taken> take(CacheKind kind, std::string_view name, const Fill& fill) const;
  // Marks an entry used that a build reached through another (an environment's runtime).
  static void mark_used(const std::filesystem::path& entry);

  // The entries, least recently used first; a cache that does not exist is empty.
  std::vector<CacheEntry> list(const NeedsOf& needs_of = {}) const;
  // The entries a policy removes, in the order given (least recently used first). Incomplete
  // staging directories older than an hour are always among them, and so is every entry that
  // needs a removed one.
  static std::vector<CacheEntry> plan_prune(const std::vector<CacheEntry>& entries,
                                            const PrunePolicy& policy);
  // Removes one entry under its lock; an error when another run holds it (it is in use) or the
  // files cannot be removed.
  static Expected<Ok> remove(const CacheEntry& entry);

 private:
  std::filesystem::path root_;
};

// The policy's quantities as people write them: "30d", "12h", "90m", "2w", "45s" (a bare number
// is days); "20G", "500M", "1.5T", "800K", bytes when bare (decimal units; "GB" and "GiB" read
// the same way).
Expected<std::chrono::seconds> parse_age(std::string_view text);
Expected<std::uint64_t> parse_size(std::string_view text);
std::string describe_age(std::chrono::seconds age);  // "3 days", "5 hours", "just now"
std::string describe_size(std::uint64_t bytes);      // "7.2 GB", "27 MB", "512 B"

}  // namespace sagebuild::store
