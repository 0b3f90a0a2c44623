#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "platform/file_lock.h"
#include "platform/process.h"

namespace sagebuild::platform {

Expected<FileLock> FileLock::lock(const std::filesystem::path& path, bool wait,
                                  const std::function<void()>& waiting) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", path.string(), std::strerror(errno))};
  bool told = false;
  // Non-blocking attempts, so that a Ctrl-C while another run holds the lock is noticed.
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int err = errno;
      ::close(fd);
      return Error{fmt::format("cannot lock {}: {}", path.string(), std::strerror(err))};
    }
    if (!wait) {
      ::close(fd);
      return Error{fmt::format("{} is in use by another sagebuild run", path.string())};
    }
    if (!told && waiting) waiting();
    told = true;
    if (stop_requested()) {
      ::close(fd);
      return Error{fmt::format("interrupted while waiting for {}", path.string())};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return FileLock(fd);
}

void FileLock::release(std::intptr_t handle) {
  ::close(static_cast<int>(handle));
}

}  // namespace sagebuild::platform
