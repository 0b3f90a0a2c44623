// POSIX implementation of platform/process.h: posix_spawn (no fork of a large parent), the child
// in its own process group (so a timeout or Ctrl-C can stop everything it started), stdin from
// /dev/null, every descriptor of ours close-on-exec, and errors that name the call that failed.
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "platform/process.h"
#include "platform/process_impl.h"

extern char** environ;

namespace sagebuild::platform {
namespace {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::vector<std::string> child_environment(const ProcessOptions& options) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos) env[std::string(entry.substr(0, eq))] = entry.substr(eq + 1);
  }
  for (const auto& name : options.unset)
    env.erase(name);
  for (const auto& [name, value] : options.environment)
    env[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : env) {
    out.push_back(name);
    out.back().append("=").append(value);
  }
  return out;
}

void stop_group(pid_t pid) {
  ::kill(-pid, SIGTERM);
  for (int i = 0; i < 20; ++i) {  // two seconds to exit cleanly, then no choice
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    ::usleep(100'000);
  }
  ::kill(-pid, SIGKILL);
}

}  // namespace

std::optional<std::filesystem::path> find_in_path(std::string_view program) {
  if (program.find('/') != std::string_view::npos) {
    return ::access(std::string(program).c_str(), X_OK) == 0
               ? std::optional<std::filesystem::path>(program)
               : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    const std::filesystem::path candidate =
        std::filesystem::path(dirs.substr(0, colon).empty() ? "." : dirs.substr(0, colon)) /
        program;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) {
      return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

namespace detail {

Expected<ProcessResult> spawn_and_wait(const std::filesystem::path& program,
                                       const std::vector<std::string>& argv,
                                       const ProcessOptions& options) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Error{fmt::format("pipe2: {}", std::strerror(errno))};
  }
  Fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  if (!options.working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, options.working_directory.c_str());
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults, empty;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT})
    sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings = child_environment(options);
  std::vector<char*> env;
  for (auto& e : env_strings)
    env.push_back(e.data());
  env.push_back(nullptr);

  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, program.c_str(), &actions, &attributes, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    return Error{fmt::format("cannot run '{}': posix_spawn: {}", argv[0], std::strerror(spawned))};
  }
  write_end.reset();

  ProcessResult result;
  OutputCollector output(result, options);
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  char buffer[65536];
  while (true) {
    // Wake up at least every 100 ms to notice request_stop() from another thread.
    int wait_ms = 100;
    if (stop_requested()) {
      result.cancelled = true;
      stop_group(pid);
      break;
    }
    if (options.timeout.count() > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        stop_group(pid);
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left.count(), wait_ms));
    }
    pollfd fd{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&fd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child (and every descendant holding the pipe) closed it
    output.add(buffer, static_cast<std::size_t>(n));
  }
  output.finish();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !result.timed_out && !result.cancelled)
    result.signal = WTERMSIG(status);
  return result;
}

}  // namespace detail
}  // namespace sagebuild::platform
