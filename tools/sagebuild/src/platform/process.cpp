// The parts of platform/process.h that are the same on every operating system.
#include "platform/process.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstring>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "platform/process_impl.h"
#include "util/secrets.h"
#include "util/text.h"

namespace sagebuild::platform {
namespace {

// Lock-free, so that a signal handler (or a console control handler) may set it.
std::atomic<bool> g_stop{false};
std::atomic<const char*> g_stop_cause{nullptr};  // lock-free: set from a signal handler
static_assert(std::atomic<bool>::is_always_lock_free);

// A word as a POSIX shell reads it back: bare when it is only safe characters, else in single
// quotes (a quote inside becomes '\'').
std::string shell_word(std::string_view word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%+=:,./-_", c);
  });
  return safe ? std::string(word) : text::shell_single_quoted(word);
}

bool secret_name(std::string_view name) {
  std::string upper(name);
  for (char& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* marker : {"TOKEN", "PASSWORD", "SECRET", "KEY", "AUTH", "CREDENTIAL"}) {
    if (upper.find(marker) != std::string::npos) return true;
  }
  return false;
}

std::string masked(std::string_view text) {
  return text.find("://") != std::string_view::npos ? redact_url(text) : std::string(text);
}

void write_command_to_log(const std::vector<std::string>& argv, const ProcessOptions& options) {
  options.log("sagebuild: " + redact_environment_secrets(command_for_log(argv, options)));
}

}  // namespace

std::string command_for_log(const std::vector<std::string>& argv, const ProcessOptions& options) {
  std::string line = "$";
  if (!options.working_directory.empty()) {
    line += " cd " + shell_word(options.working_directory.string()) + " &&";
  }
  for (const std::string& name : options.unset)
    line += " unset " + shell_word(name) + ";";
  for (const auto& [name, value] : options.environment) {
    line +=
        " " + name + "=" + shell_word(secret_name(name) && !value.empty() ? "***" : masked(value));
  }
  for (const std::string& word : argv)
    line += " " + shell_word(masked(word));
  return line;
}

void request_stop(const char* cause) noexcept {
  const char* none = nullptr;
  if (cause) g_stop_cause.compare_exchange_strong(none, cause);
  g_stop.store(true);
}
const char* stop_cause() noexcept {
  const char* cause = g_stop_cause.load();
  return cause ? cause : "a stop request";
}
bool stop_requested() noexcept {
  return g_stop.load();
}
void clear_stop() noexcept {
  g_stop_cause.store(nullptr);
  g_stop.store(false);
}

std::string ProcessResult::describe() const {
  if (timed_out) return "timed out";
  if (cancelled) return "stopped (interrupted)";
#ifdef _WIN32
  if (signal) return fmt::format("killed by signal {}", signal);  // never set on Windows
#else
  if (signal) {
    // The name a user can search for ("SIGSEGV: a crash"), then the C library's description.
    static constexpr std::pair<int, const char*> kNames[] = {
        {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
        {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
        {SIGXFSZ, "SIGXFSZ"}, {SIGPIPE, "SIGPIPE"}};
    const auto* named = std::find_if(std::begin(kNames), std::end(kNames),
                                     [this](const auto& n) { return n.first == signal; });
    return named != std::end(kNames)
               ? fmt::format("killed by {} ({})", named->second, ::strsignal(signal))
               : fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  }
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
  if (options.log) write_command_to_log(argv, options);
  const auto program = find_in_path(argv[0]);
  if (!program) return Error{fmt::format("cannot run '{}': not found in PATH", argv[0])};
  return detail::spawn_and_wait(*program, argv, options);
}

namespace detail {

OutputCollector::OutputCollector(ProcessResult& result, const ProcessOptions& options)
    : result_(result), keep_(options.keep_output), log_(options.log), on_line_(options.on_line) {}

void OutputCollector::add(const char* data, std::size_t size) {
  result_.output.append(data, size);
  if (result_.output.size() > 2 * keep_) {
    // Masked before the cut, so that no secret is left half (and so unmaskable) at the start.
    result_.output = redact_environment_secrets(std::move(result_.output));
    result_.output.erase(0, result_.output.size() - std::min(keep_, result_.output.size()));
  }
  if (!log_ && !on_line_) return;
  // Whole lines only, with the environment's secrets masked (util/secrets.h: a child may print
  // its configuration); "\r" ends one too (pip and cmake redraw progress with it). A line
  // without its end waits for it, up to 64 KiB.
  for (std::size_t i = 0; i < size; ++i) {
    const char c = data[i];
    if (c == '\n' || c == '\r' || line_.size() >= std::size_t{64} * 1024) {
      if (!line_.empty()) pass_line();
      line_.clear();
      if (c == '\n' || c == '\r') continue;
    }
    line_ += c;
  }
}

void OutputCollector::pass_line() {
  const std::string line = redact_environment_secrets(line_);
  if (log_) log_(line);
  if (on_line_) on_line_(line);
}

void OutputCollector::finish() {
  // The kept output reaches messages and the results file: masked, then cut.
  result_.output = redact_environment_secrets(std::move(result_.output));
  if (result_.output.size() > keep_) result_.output.erase(0, result_.output.size() - keep_);
  if (!line_.empty() && (log_ || on_line_)) pass_line();
  line_.clear();
}

}  // namespace detail
}  // namespace sagebuild::platform
