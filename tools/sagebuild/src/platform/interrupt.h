// Ctrl-C for long commands: while an InterruptGuard lives, SIGINT and SIGTERM call
// platform::request_stop() (every child process group is stopped, see process.h) instead of
// killing sagebuild, so that it can report what finished and leave nothing half-written.
// A second Ctrl-C is not caught: it ends sagebuild at once.
#pragma once

namespace sagebuild::platform {

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

}  // namespace sagebuild::platform
