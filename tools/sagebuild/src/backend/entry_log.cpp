#include "backend/entry_log.h"

#include <system_error>
#include <utility>

#include "util/fs.h"
#include "util/secrets.h"

namespace sagebuild::backend {

namespace stdfs = std::filesystem;

EntryLog::EntryLog(Status& status, std::string id, stdfs::path path)
    : status_(status), id_(std::move(id)), path_(std::move(path)) {
  partial_ = path_;
  partial_ += ".partial";
  std::error_code ec;
  stdfs::create_directories(path_.parent_path(), ec);
  file_.open(partial_, std::ios::binary | std::ios::trunc);
}

void EntryLog::phase(const std::string& name) {
  status_.phase(id_, name);
  write("== " + name);
}

void EntryLog::note(const std::string& line_text) {
  status_.note(id_, line_text);
  write("sagebuild: " + line_text);
}

void EntryLog::line(std::string_view text_line) {
  status_.log_line(id_, write(text_line));
}

std::string EntryLog::write(std::string_view text_line) {
  std::string masked = redact_environment_secrets(std::string(text_line));
  // Flushed line by line: `tail -f` on a running build's log sees each line as it comes.
  std::lock_guard lock(mutex_);
  file_ << masked << '\n' << std::flush;
  return masked;
}

void EntryLog::text(std::string_view text) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    line(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
}

platform::LogLines EntryLog::sink() {
  return [this](std::string_view text_line) { line(text_line); };
}

void EntryLog::close() {
  std::lock_guard lock(mutex_);
  file_.close();
}

stdfs::path EntryLog::keep() {
  close();
  return fs::move_file(partial_, path_) ? path_ : partial_;
}

void EntryLog::discard() {
  close();
  std::error_code ec;
  stdfs::remove(partial_, ec);
}

}  // namespace sagebuild::backend
