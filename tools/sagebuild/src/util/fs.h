// File access for the rest of sagebuild: whole-file reads and atomic replacement, so that a failed
// or interrupted write never leaves a half-written file where the user's file was.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace sagebuild::fs {

// Every read has a bound: a file that sagebuild reads whole (results, notes, probes) holds at most
// this much; /dev/zero or a runaway file is an error that says so, not a full memory.
inline constexpr std::size_t kMaxReadBytes = 64u << 20;

// A whole file, up to `limit` bytes: more is an error that says so, read no further (a device
// like /dev/zero never ends). A FIFO (whose open would block), a socket or a folder is refused.
Expected<std::string> read_file(const std::filesystem::path& path,
                                std::size_t limit = kMaxReadBytes);

// Writes `content` to a temporary file beside `path`, flushes it, then renames it over `path`.
Expected<Ok> write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Moves `from` to `to`: a rename where both are on one file system; else (a dist/ on a tmpfs, a
// mounted volume) a copy into a temporary name beside `to`, flushed to disk, renamed into place,
// and only then is `from` removed. Either way `to` never exists half-written.
Expected<Ok> move_file(const std::filesystem::path& from, const std::filesystem::path& to);

// Appends to a file (GITHUB_OUTPUT and friends are append-only by contract).
Expected<Ok> append_file(const std::filesystem::path& path, std::string_view content);

// A fresh directory under the system's temporary directory, removed with everything in it when
// the object goes out of scope, whatever happened.
class TempDir {
 public:
  explicit TempDir(std::string_view purpose = "sagebuild");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// sagebuild's cache: $SAGEBUILD_CACHE_DIR, else $XDG_CACHE_HOME/sagebuild, else
// ~/.cache/sagebuild (the XDG base directory rule).
std::filesystem::path default_cache_dir();

// The nearest directory at or above `start` that contains `name`.
std::filesystem::path find_upwards(const std::filesystem::path& start, std::string_view name);

}  // namespace sagebuild::fs
