// The parts of platform/file_lock.h that are the same on every operating system.
#include "platform/file_lock.h"

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

}  // namespace sagebuild::platform
