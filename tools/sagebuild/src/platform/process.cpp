// The parts of platform/process.h that are the same on every operating system.
#include "platform/process.h"

#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "platform/process_impl.h"

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

Expected<ProcessResult> run_process(const std::vector<std::string>& argv,
                                    const ProcessOptions& options) {
  if (argv.empty()) return Error{"no program to run"};
  if (stop_requested()) {
    ProcessResult stopped;
    stopped.cancelled = true;
    return stopped;
  }
  const auto program = find_in_path(argv[0]);
  if (!program) return Error{fmt::format("cannot run '{}': not found in PATH", argv[0])};
  return detail::spawn_and_wait(*program, argv, options);
}

namespace detail {

OutputCollector::OutputCollector(ProcessResult& result, const ProcessOptions& options)
    : result_(result), keep_(options.keep_output) {
  if (!options.log_file.empty()) log_.open(options.log_file, std::ios::binary | std::ios::app);
}

void OutputCollector::add(const char* data, std::size_t size) {
  result_.output.append(data, size);
  if (log_) log_.write(data, static_cast<std::streamsize>(size));
  if (result_.output.size() > 2 * keep_) result_.output.erase(0, result_.output.size() - keep_);
}

void OutputCollector::finish() {
  if (result_.output.size() > keep_) result_.output.erase(0, result_.output.size() - keep_);
  if (log_) log_.flush();
}

}  // namespace detail
}  // namespace sagebuild::platform
