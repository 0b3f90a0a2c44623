// The parts of platform/file_lock.h that are the same on every operating system.
#include "platform/file_lock.h"

#include <random>

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

Expected<bool> make_directory_once(
    const std::filesystem::path& final, const std::string& marker,
    const std::function<Expected<Ok>(const std::filesystem::path& staging)>& fill,
    const std::function<void()>& waiting) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  if (stdfs::exists(final / marker, ec)) return false;
  auto lock = FileLock::acquire(final.string() + ".lock", waiting);
  if (!lock) return lock.error();
  if (stdfs::exists(final / marker, ec)) return false;  // made while we waited
  const stdfs::path staging = final.string() + fmt::format(".tmp-{:08x}", std::random_device{}());
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
