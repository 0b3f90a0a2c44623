// Listing and pruning the build cache (build_cache.h).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "platform/file_lock.h"
#include "store/build_cache.h"

namespace sagebuild::store {
namespace {

namespace stdfs = std::filesystem;

std::uint64_t tree_bytes(const stdfs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (stdfs::recursive_directory_iterator
           it(dir, stdfs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    std::error_code stat;
    if (it->is_regular_file(stat) && !it->is_symlink(stat)) total += it->file_size(stat);
  }
  return total;
}

std::chrono::seconds age_of(const stdfs::path& p) {
  std::error_code ec;
  const auto when = stdfs::last_write_time(p, ec);
  if (ec) return std::chrono::seconds::max();
  const auto age =
      std::chrono::duration_cast<std::chrono::seconds>(stdfs::file_time_type::clock::now() - when);
  return std::max(age, std::chrono::seconds(0));
}

// "<dir>.tmp-<hex>": the staging directory of BuildCache::take; "<dir>.removing-<hex>": an
// entry a prune renamed aside and could not finish removing. Either way, <dir> is its entry.
std::optional<stdfs::path> staging_of(const stdfs::path& p) {
  const std::string name = p.filename().string();
  for (const char* suffix : {".tmp-", ".removing-"}) {
    const std::size_t at = name.rfind(suffix);
    if (at != std::string::npos && at > 0) return p.parent_path() / name.substr(0, at);
  }
  return std::nullopt;
}

// Entries sit one level (envs/x) or two levels (cuda/12.9/toolkit) below the cache root.
void scan(const stdfs::path& root, const stdfs::path& dir, int depth, const NeedsOf& needs_of,
          std::vector<CacheEntry>& out) {
  std::error_code ec;
  for (const auto& item : stdfs::directory_iterator(dir, ec)) {
    std::error_code stat;
    if (!item.is_directory(stat) || item.is_symlink(stat)) continue;
    const stdfs::path& p = item.path();
    const std::string relative = p.lexically_relative(root).generic_string();
    const std::string kind = relative.substr(0, relative.find('/'));
    if (auto final = staging_of(p)) {
      CacheEntry entry{kind, relative, p, tree_bytes(p), age_of(p), true};
      // A fill in progress holds the entry's lock (BuildCache::take); one an interrupted run
      // left behind holds nothing. Taken for a moment only when free.
      entry.being_made = !platform::FileLock::try_acquire(final->string() + ".lock");
      out.push_back(std::move(entry));
    } else if (stdfs::exists(p.string() + ".lock", stat)) {
      CacheEntry entry{kind, relative, p, tree_bytes(p), age_of(p.string() + ".lock"), false};
      if (auto needed = needs_of ? needs_of(p) : std::nullopt) {
        entry.needs = needed->lexically_relative(root).generic_string();
      }
      out.push_back(std::move(entry));
    } else if (depth < 3) {
      scan(root, p, depth + 1, needs_of, out);
    }
  }
}

}  // namespace

std::vector<CacheEntry> BuildCache::list(const NeedsOf& needs_of) const {
  std::vector<CacheEntry> entries;
  scan(root_, root_, 1, needs_of, entries);
  std::stable_sort(entries.begin(), entries.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.age != b.age ? a.age > b.age : a.name < b.name;
  });
  return entries;
}

std::vector<CacheEntry> BuildCache::plan_prune(const std::vector<CacheEntry>& entries,
                                               const PrunePolicy& policy) {
  std::vector<CacheEntry> removed;
  std::uint64_t kept_bytes = 0;
  std::vector<const CacheEntry*> kept;
  for (const CacheEntry& e : entries) {
    // A staging directory younger than an hour may be a fill in progress whose lock this listing
    // took for a moment: left alone, as one a running build holds now.
    const bool stale_staging = e.incomplete && !e.being_made && e.age >= std::chrono::hours(1);
    if (policy.all || stale_staging || (policy.older_than && e.age >= *policy.older_than)) {
      removed.push_back(e);
    } else {
      kept.push_back(&e);
      kept_bytes += e.bytes;
    }
  }
  auto goes = [&](const std::string& name) {
    return std::any_of(removed.begin(), removed.end(),
                       [&](const CacheEntry& r) { return r.name == name; });
  };
  if (policy.max_bytes) {
    // `kept` is least recently used first: those go until the rest fit.
    for (const CacheEntry* e : kept) {
      if (kept_bytes <= *policy.max_bytes) break;
      if (e->incomplete || goes(e->name)) continue;
      removed.push_back(*e);
      kept_bytes -= e->bytes;
    }
  }
  // What needs a removed entry goes with it (an environment without its runtime is broken).
  for (const CacheEntry* e : kept) {
    if (!e->needs.empty() && goes(e->needs) && !goes(e->name)) removed.push_back(*e);
  }
  return removed;
}

Expected<Ok> BuildCache::remove(const CacheEntry& entry) {
  const stdfs::path final = entry.incomplete ? *staging_of(entry.path) : entry.path;
  auto lock = platform::FileLock::try_acquire(final.string() + ".lock");
  if (!lock) return Error{fmt::format("{}: in use by another sagebuild run; left", entry.name)};
  std::error_code ec;
  // Renamed aside first: a run that looks for the entry finds it whole or not at all.
  const stdfs::path aside =
      entry.path.string() + fmt::format(".removing-{:08x}", std::random_device{}());
  stdfs::rename(entry.path, aside, ec);
  if (ec) return Error{fmt::format("cannot remove {}: {}", entry.path.string(), ec.message())};
  stdfs::remove_all(aside, ec);
  if (ec) {
    return Error{fmt::format("removed {} from the cache, but {} is left: {}", entry.name,
                             aside.string(), ec.message())};
  }
  // The lock file stays: a run that opened it while we held it must lock the same file.
  return Ok{};
}

Expected<std::chrono::seconds> parse_age(std::string_view text) {
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  const auto bad = [&] {
    return Error{
        fmt::format("'{}' is not an age: write a number and a unit, like 30d, 12h, 90m "
                    "or 2w",
                    text)};
  };
  if (error != std::errc() || end == text.data() || number < 0) return bad();
  const std::int64_t limit = 100LL * 365 * 86400;  // a century is "everything"
  std::int64_t scale = 0;
  if (unit.empty() || unit == "d") scale = 86400;
  if (unit == "w") scale = std::int64_t{7} * 86400;
  if (unit == "h") scale = 3600;
  if (unit == "m") scale = 60;
  if (unit == "s") scale = 1;
  if (scale == 0) return bad();
  return std::chrono::seconds(number > limit / scale ? limit : number * scale);
}

Expected<std::uint64_t> parse_size(std::string_view text) {
  std::string t(text);
  const auto bad = [&] {
    return Error{
        fmt::format("'{}' is not a size: write a number and a unit, like 20G, 500M or 1.5T", text)};
  };
  std::size_t digits = 0;
  while (digits < t.size() &&
         (std::isdigit(static_cast<unsigned char>(t[digits])) || t[digits] == '.'))
    ++digits;
  if (digits == 0 || digits > 20) return bad();
  double number = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + digits, number);
  if (error != std::errc() || end != t.data() + digits || !std::isfinite(number)) return bad();
  std::string unit = t.substr(digits);
  for (char& c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB"))
    unit.resize(unit.size() - 2);
  else if (unit.size() == 2 && unit.back() == 'B')
    unit.resize(1);
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "K") scale = 1e3;
  if (unit == "M") scale = 1e6;
  if (unit == "G") scale = 1e9;
  if (unit == "T") scale = 1e12;
  if (scale == 0 || number * scale > 1e18) return bad();
  return static_cast<std::uint64_t>(number * scale);
}

std::string describe_age(std::chrono::seconds age) {
  const std::int64_t s = age.count();
  if (age == std::chrono::seconds::max()) return "unknown";
  const auto plural = [](std::int64_t n, const char* unit) {
    return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s");
  };
  if (s < 60) return "just now";
  if (s < 3600) return plural(s / 60, "minute");
  if (s < 86400) return plural(s / 3600, "hour");
  return plural(s / 86400, "day");
}

std::string describe_size(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.1f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.0f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.0f} kB", b / 1e3);
  return fmt::format("{} B", bytes);
}

}  // namespace sagebuild::store
