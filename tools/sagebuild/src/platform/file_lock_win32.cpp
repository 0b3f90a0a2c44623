#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <thread>
#include <windows.h>

#include <fmt/format.h>

#include "platform/file_lock.h"
#include "platform/process.h"

namespace sagebuild::platform {

// LockFileEx on the whole file; released by the system when the handle closes or the process
// ends, like flock on POSIX.
Expected<FileLock> FileLock::lock(const std::filesystem::path& path, bool wait,
                                  const std::function<void()>& waiting) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  HANDLE h = ::CreateFileW(path.c_str(), GENERIC_READ | GENERIC_WRITE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                           OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    return Error{fmt::format("cannot open {} (error {})", path.string(), ::GetLastError())};
  }
  bool told = false;
  while (true) {
    OVERLAPPED whole{};
    if (::LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD, MAXDWORD,
                     &whole)) {
      break;
    }
    if (::GetLastError() != ERROR_LOCK_VIOLATION) {
      const DWORD err = ::GetLastError();
      ::CloseHandle(h);
      return Error{fmt::format("cannot lock {} (error {})", path.string(), err)};
    }
    if (!wait) {
      ::CloseHandle(h);
      return Error{fmt::format("{} is in use by another sagebuild run", path.string())};
    }
    if (!told && waiting) waiting();
    told = true;
    if (stop_requested()) {
      ::CloseHandle(h);
      return Error{fmt::format("interrupted while waiting for {}", path.string())};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return FileLock(reinterpret_cast<std::intptr_t>(h));
}

void FileLock::release(std::intptr_t handle) {
  ::CloseHandle(reinterpret_cast<HANDLE>(handle));
}

}  // namespace sagebuild::platform
