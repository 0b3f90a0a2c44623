// The build cache's look-up, fill and use (build_cache.h); listing and pruning are inventory.cpp.
#include "store/build_cache.h"

#include <algorithm>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "platform/file_lock.h"

namespace sagebuild::store {

namespace stdfs = std::filesystem;

std::string_view directory_of(CacheKind kind) {
  const auto* info = std::find_if(std::begin(kCacheKinds), std::end(kCacheKinds),
                                  [kind](const CacheKindInfo& k) { return k.kind == kind; });
  return info->directory;
}

stdfs::path BuildCache::directory(CacheKind kind) const {
  return root_ / directory_of(kind);
}

stdfs::path BuildCache::path(CacheKind kind, std::string_view name) const {
  return directory(kind) / stdfs::path(name);
}

void BuildCache::mark_used(const stdfs::path& entry) {
  // The lock file's modification time is the entry's last use.
  const stdfs::path lock_file = entry.string() + ".lock";
  std::error_code ec;
  if (!stdfs::exists(lock_file, ec)) std::ofstream(lock_file, std::ios::app).flush();
  stdfs::last_write_time(lock_file, stdfs::file_time_type::clock::now(), ec);
}

Expected<Taken> BuildCache::take(CacheKind kind, std::string_view name, const Fill& fill) const {
  std::error_code ec;
  const stdfs::path final = path(kind, name);
  if (stdfs::exists(final / fill.marker, ec)) {
    mark_used(final);
    return Taken{final, true};
  }
  stdfs::create_directories(final.parent_path(), ec);
  auto lock = platform::FileLock::acquire(final.string() + ".lock", fill.waiting);
  if (!lock) return lock.error();
  mark_used(final);
  if (stdfs::exists(final / fill.marker, ec)) return Taken{final, true};  // made while we waited
  // One fixed staging name: the lock makes it this run's (what an interrupted run left is
  // removed), and what is compiled in it has the same paths on every machine, which a compile
  // cache shared across machines needs (generated sources in a build folder with a random name
  // missed it every time: scripts/test-remote-cache.sh).
  const stdfs::path staging = final.string() + ".tmp-00000000";
  stdfs::remove_all(staging, ec);
  auto filled = fill.fill(staging);
  if (!filled) {
    stdfs::remove_all(staging, ec);
    return filled.error();
  }
  stdfs::remove_all(final, ec);  // an incomplete one (no marker), e.g. from an older layout
  stdfs::rename(staging, final, ec);
  if (ec) {
    stdfs::remove_all(staging, ec);
    return Error{fmt::format("cannot move {} into place: {}", final.string(), ec.message())};
  }
  return Taken{final, false};
}

}  // namespace sagebuild::store
