// What the build cache holds, and pruning it (`sagebuild cache`). Every cache entry is a
// directory made once under its lock file (platform::make_directory_once): envs/<name>,
// torch-runtime/<digest>, kernels/<key>, bindings/<key>, cuda/<X.Y>/toolkit. So an entry is a
// directory with a sibling "<dir>.lock", and the lock file's time is the entry's last use (each
// build touches it when it takes the entry). A "<dir>.tmp-<hex>" directory is a fill in progress,
// or one a killed run left behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace sagebuild::backend {

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

// The cache's entries, least recently used first. A cache that does not exist is empty.
std::vector<CacheEntry> list_cache(const std::filesystem::path& root);

struct PrunePolicy {
  bool all = false;                                               // every entry
  std::optional<std::chrono::seconds> older_than = std::nullopt;  // unused for longer than this
  std::optional<std::uint64_t> max_bytes = std::nullopt;          // then LRU until the rest fit
};

// The entries a policy removes, in the order given (least recently used first). Incomplete
// staging directories older than an hour are always among them, and so is every entry that
// needs a removed one (an environment whose torch runtime goes).
std::vector<CacheEntry> plan_prune(const std::vector<CacheEntry>& entries,
                                   const PrunePolicy& policy);

// Removes one entry under its lock; an error when another run holds it (it is in use) or the
// files cannot be removed. The entry is first renamed aside, so that no run ever sees it half
// removed.
Expected<Ok> remove_cache_entry(const CacheEntry& entry);

// "30d", "12h", "90m", "2w", "45s" (a bare number is days).
Expected<std::chrono::seconds> parse_age(std::string_view text);
// "20G", "500M", "1.5T", "800K", bytes when bare; decimal units (G = 10^9), "GB" and "GiB" read
// the same way.
Expected<std::uint64_t> parse_size(std::string_view text);
// "3 days", "5 hours", "just now".
std::string describe_age(std::chrono::seconds age);
// "7.2 GB", "27 MB", "512 B".
std::string describe_size(std::uint64_t bytes);

}  // namespace sagebuild::backend
