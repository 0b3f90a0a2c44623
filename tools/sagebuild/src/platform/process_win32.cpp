// Win32 implementation of platform/process.h, for the MSVC backend: CreateProcessW with the
// child in a job object (so that a timeout or Ctrl-C stops everything it started, as a process
// group does on POSIX), stdin from NUL, stdout and stderr into one pipe, and argv quoted the way
// the Microsoft C runtime splits a command line.
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>
#include <windows.h>

#include <fmt/format.h>

#include "platform/process.h"
#include "platform/process_impl.h"

namespace sagebuild::platform {
namespace {

std::wstring widen(std::string_view s) {
  if (s.empty()) return {};
  const int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n), L'\0');
  ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), out.data(), n);
  return out;
}

std::string narrow(std::wstring_view s) {
  if (s.empty()) return {};
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0,
                                      nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n), '\0');
  ::WideCharToMultiByte(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), out.data(), n, nullptr,
                        nullptr);
  return out;
}

std::string last_error(const char* call) {
  const DWORD code = ::GetLastError();
  wchar_t* text = nullptr;
  ::FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
      nullptr, code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string message = text ? narrow(text) : fmt::format("error {}", code);
  if (text) ::LocalFree(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
    message.pop_back();
  return fmt::format("{}: {}", call, message);
}

class Handle {
 public:
  explicit Handle(HANDLE h = nullptr) : h_(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  HANDLE get() const { return h_; }
  void reset() {
    if (h_ && h_ != INVALID_HANDLE_VALUE) ::CloseHandle(h_);
    h_ = nullptr;
  }

 private:
  HANDLE h_;
};

// One argument as CommandLineToArgvW and the C runtime read it back: quoted when it has spaces,
// tabs or quotes; backslashes doubled only before a quote.
void append_quoted(std::wstring& line, const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) {
    line += arg;
    return;
  }
  line += L'"';
  for (auto it = arg.begin();; ++it) {
    std::size_t backslashes = 0;
    while (it != arg.end() && *it == L'\\') {
      ++it;
      ++backslashes;
    }
    if (it == arg.end()) {
      line.append(backslashes * 2, L'\\');
      break;
    }
    if (*it == L'"') {
      line.append(backslashes * 2 + 1, L'\\');
    } else {
      line.append(backslashes, L'\\');
    }
    line += *it;
  }
  line += L'"';
}

// The environment block: ours with the options applied, names compared without case, sorted
// (as CreateProcess expects), each "NAME=value\0", then a final "\0".
std::wstring environment_block(const ProcessOptions& options) {
  struct NoCase {
    bool operator()(const std::wstring& a, const std::wstring& b) const {
      return ::_wcsicmp(a.c_str(), b.c_str()) < 0;
    }
  };
  std::map<std::wstring, std::wstring, NoCase> env;
  wchar_t* block = ::GetEnvironmentStringsW();
  for (const wchar_t* p = block; p && *p; p += std::wcslen(p) + 1) {
    const std::wstring entry(p);
    const std::size_t eq = entry.find(L'=', 1);  // "=C:=C:\x" entries start with '='
    if (eq != std::wstring::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (block) ::FreeEnvironmentStringsW(block);
  for (const auto& name : options.unset)
    env.erase(widen(name));
  for (const auto& [name, value] : options.environment)
    env[widen(name)] = widen(value);
  std::wstring out;
  for (const auto& [name, value] : env) {
    out += name + L"=" + value;
    out += L'\0';
  }
  out += L'\0';
  return out;
}

}  // namespace

std::optional<std::filesystem::path> find_in_path(std::string_view program) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> extensions = {""};
  if (stdfs::path(program).extension().empty()) {
    const char* pathext = std::getenv("PATHEXT");
    std::string exts = pathext ? pathext : ".COM;.EXE;.BAT;.CMD";
    for (std::size_t at = 0; at <= exts.size();) {
      const std::size_t semi = std::min(exts.find(';', at), exts.size());
      if (semi > at) extensions.push_back(exts.substr(at, semi - at));
      at = semi + 1;
    }
  }
  auto try_dir = [&](const stdfs::path& dir) -> std::optional<stdfs::path> {
    for (const auto& ext : extensions) {
      const stdfs::path candidate = dir / (std::string(program) + ext);
      if (stdfs::is_regular_file(candidate, ec)) return candidate;
    }
    return std::nullopt;
  };
  if (program.find_first_of("/\\") != std::string_view::npos) return try_dir("");
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "";
  for (std::size_t at = 0; at <= dirs.size();) {
    const std::size_t semi = std::min(dirs.find(';', at), dirs.size());
    if (semi > at) {
      if (auto found = try_dir(dirs.substr(at, semi - at))) return found;
    }
    at = semi + 1;
  }
  return std::nullopt;
}

namespace detail {

Expected<ProcessResult> spawn_and_wait(const std::filesystem::path& program,
                                       const std::vector<std::string>& argv,
                                       const ProcessOptions& options) {
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE read_raw = nullptr, write_raw = nullptr;
  if (!::CreatePipe(&read_raw, &write_raw, &inherit, 0)) return Error{last_error("CreatePipe")};
  Handle read_end(read_raw), write_end(write_raw);
  ::SetHandleInformation(read_end.get(), HANDLE_FLAG_INHERIT, 0);
  Handle null_in(::CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit,
                               OPEN_EXISTING, 0, nullptr));

  // A job object: every descendant is in it, and closing it (or TerminateJobObject) ends them.
  Handle job(::CreateJobObjectW(nullptr, nullptr));
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  ::SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits);

  // .bat and .cmd files run through cmd.exe, which CreateProcess does for them.
  std::wstring line;
  append_quoted(line, program.wstring());
  for (std::size_t i = 1; i < argv.size(); ++i) {
    line += L' ';
    append_quoted(line, widen(argv[i]));
  }
  std::wstring env = environment_block(options);
  const std::wstring cwd = options.working_directory.wstring();

  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = null_in.get();
  startup.hStdOutput = write_end.get();
  startup.hStdError = write_end.get();
  PROCESS_INFORMATION info{};
  if (!::CreateProcessW(nullptr, line.data(), nullptr, nullptr, TRUE,
                        CREATE_UNICODE_ENVIRONMENT | CREATE_SUSPENDED | CREATE_NO_WINDOW,
                        env.data(), cwd.empty() ? nullptr : cwd.c_str(), &startup, &info)) {
    return Error{fmt::format("cannot run '{}': {}", argv[0], last_error("CreateProcessW"))};
  }
  Handle process(info.hProcess), thread(info.hThread);
  ::AssignProcessToJobObject(job.get(), process.get());
  ::ResumeThread(thread.get());
  write_end.reset();  // the pipe reports end of file once every writer (the children) is gone

  ProcessResult result;
  OutputCollector output(result, options);
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  char buffer[65536];
  auto stop_all = [&] {
    ::TerminateJobObject(job.get(), 1);
    ::WaitForSingleObject(process.get(), 5000);
  };
  while (true) {
    if (stop_requested()) {
      result.cancelled = true;
      stop_all();
      break;
    }
    if (options.timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      stop_all();
      break;
    }
    DWORD available = 0;
    if (!::PeekNamedPipe(read_end.get(), nullptr, 0, nullptr, &available, nullptr)) {
      break;  // ERROR_BROKEN_PIPE: every writer closed it
    }
    if (available == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    DWORD n = 0;
    if (!::ReadFile(read_end.get(), buffer, std::min<DWORD>(available, sizeof buffer), &n,
                    nullptr) ||
        n == 0) {
      break;
    }
    output.add(buffer, static_cast<std::size_t>(n));
  }
  output.finish();
  ::WaitForSingleObject(process.get(), INFINITE);
  DWORD code = 0;
  ::GetExitCodeProcess(process.get(), &code);
  result.exit_code = static_cast<int>(code);
  return result;
}

}  // namespace detail
}  // namespace sagebuild::platform
