// The parts of platform/file_lock.h that are the same on every operating system.
#include "platform/file_lock.h"

#include <fstream>

#include <fmt/format.h>

namespace sagebuild::platform {

FileLock::FileLock(FileLock&& other) noexcept : handle_(other.handle_) {
  other.handle_ = -1;
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (handle_ >= 0) release(handle_);
    handle_ = other.handle_;
    other.handle_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (handle_ >= 0) release(handle_);
}

Expected<FileLock> FileLock::acquire(const std::filesystem::path& path,
                                     const std::function<void()>& waiting) {
  return lock(path, true, waiting);
}

Expected<FileLock> FileLock::try_acquire(const std::filesystem::path& path) {
  return lock(path, false, {});
}

namespace {

// The lock file's modification time is the entry's last use.
void mark_used(const std::filesystem::path& lock_file) {
  std::error_code ec;
  if (!std::filesystem::exists(lock_file, ec)) std::ofstream(lock_file, std::ios::app).flush();
  std::filesystem::last_write_time(lock_file, std::filesystem::file_time_type::clock::now(), ec);
}

}  // namespace

void mark_directory_used(const std::filesystem::path& final) {
  mark_used(final.string() + ".lock");
}

Expected<bool> make_directory_once(
    const std::filesystem::path& final, const std::string& marker,
    const std::function<Expected<Ok>(const std::filesystem::path& staging)>& fill,
    const std::function<void()>& waiting) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  const stdfs::path lock_file = final.string() + ".lock";
  if (stdfs::exists(final / marker, ec)) {
    mark_used(lock_file);
    return false;
  }
  auto lock = FileLock::acquire(lock_file, waiting);
  if (!lock) return lock.error();
  mark_used(lock_file);
  if (stdfs::exists(final / marker, ec)) return false;  // made while we waited
  // One fixed staging name: the lock makes it this run's (what an interrupted run left is
  // removed), and what is compiled in it has the same paths on every machine, which a compile
  // cache shared across machines needs (generated sources in a build folder with a random name
  // missed it every time: scripts/test-remote-cache.sh).
  const stdfs::path staging = final.string() + ".tmp-00000000";
  stdfs::remove_all(staging, ec);
  auto filled = fill(staging);
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
  return true;
}

}  // namespace sagebuild::platform
