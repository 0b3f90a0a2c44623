// An exclusive lock on a file, held for the object's lifetime: how two sagebuild runs (or two
// entries of one run) that share a cache take turns to fill one of its entries. The lock is the
// operating system's (flock on POSIX), so it is released when the holder exits, however it exits.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>

#include "util/expected.h"

namespace sagebuild::platform {

class FileLock {
 public:
  // Blocks until the lock is had; `waiting` is called once if another holder makes us wait.
  // Gives up, with an error, when request_stop() is called while waiting.
  static Expected<FileLock> acquire(const std::filesystem::path& path,
                                    const std::function<void()>& waiting = {});
  // The lock if no one holds it; an error ("... is in use by another sagebuild run") if someone
  // does (`sagebuild cache prune` leaves such entries alone).
  static Expected<FileLock> try_acquire(const std::filesystem::path& path);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  // The open file: a descriptor on POSIX, a HANDLE's value on Windows; -1 when moved from.
  explicit FileLock(std::intptr_t handle) : handle_(handle) {}
  static Expected<FileLock> lock(const std::filesystem::path& path, bool wait,
                                 const std::function<void()>& waiting);  // per OS
  static void release(std::intptr_t handle);  // closes it: the system drops the lock
  std::intptr_t handle_ = -1;
};

}  // namespace sagebuild::platform
