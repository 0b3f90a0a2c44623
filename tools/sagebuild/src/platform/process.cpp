// The parts of platform/process.h that are the same on every operating system.
#include "platform/process.h"

#include <atomic>
#include <cstring>

#include <fmt/format.h>

namespace sagebuild::platform {
namespace {

// Lock-free, so that a signal handler (or a console control handler) may set it.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

}  // namespace

void request_stop() noexcept {
  g_stop.store(true);
}
bool stop_requested() noexcept {
  return g_stop.load();
}
void clear_stop() noexcept {
  g_stop.store(false);
}

std::string ProcessResult::describe() const {
  if (timed_out) return "timed out";
  if (cancelled) return "stopped (interrupted)";
#ifdef _WIN32
  if (signal) return fmt::format("killed by signal {}", signal);  // never set on Windows
#else
  if (signal) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
#endif
  return fmt::format("exit code {}", exit_code);
}

std::string ProcessResult::last_line() const {
  std::string_view text = output;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.remove_suffix(1);
  return std::string(text.substr(text.rfind('\n') + 1));
}

}  // namespace sagebuild::platform
