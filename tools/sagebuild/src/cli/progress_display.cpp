#include "cli/progress_display.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/log_safe_stream.h"
#include "cli/terminal.h"

namespace sagebuild::cli {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class PlainProgress : public backend::Status {
 public:
  PlainProgress(std::ostream& out, LogEcho logs) : out_(out), logs_(logs) {}
  void phase(const std::string& id, const std::string& phase) override {
    std::lock_guard lock(mutex_);
    auto [it, added] = started_.try_emplace(id, Clock::now());
    out_ << fmt::format("[{}] {} ({:.0f} s)\n", id, phase, since(it->second)) << std::flush;
  }
  void note(const std::string& id, const std::string& line) override {
    std::lock_guard lock(mutex_);
    out_ << fmt::format("[{}] {}\n", id, line) << std::flush;
  }
  void log_line(const std::string& id, std::string_view line) override {
    if (logs_ != LogEcho::off) note(id, std::string(line));
  }
  void finished(const std::string& id, bool, const std::string& line) override { note(id, line); }
  void stop() override {}

 private:
  std::ostream& out_;
  LogEcho logs_;
  std::mutex mutex_;
  std::map<std::string, Clock::time_point> started_;
};

class GithubProgress : public backend::Status {
 public:
  GithubProgress(std::ostream& out, LogEcho logs) : out_(out), logs_(logs) {}
  void phase(const std::string& id, const std::string& phase) override {
    std::lock_guard lock(mutex_);
    auto [it, added] = started_.try_emplace(id, Clock::now());
    lines_[id].push_back(fmt::format("{} ({:.0f} s)", phase, since(it->second)));
  }
  void note(const std::string& id, const std::string& line) override {
    std::lock_guard lock(mutex_);
    lines_[id].push_back(line);
  }
  void log_line(const std::string& id, std::string_view line) override {
    if (logs_ == LogEcho::as_notes) note(id, std::string(line));
    if (logs_ != LogEcho::at_once) return;
    std::lock_guard lock(mutex_);
    out_ << fmt::format("[{}] {}\n", id, line) << std::flush;
  }
  void finished(const std::string& id, bool ok, const std::string& line) override {
    std::lock_guard lock(mutex_);
    out_ << workflow_command(fmt::format("::group::{} {}", ok ? "✓" : "✗", id)) << "\n";
    for (const std::string& l : lines_[id])
      out_ << l << "\n";
    out_ << line << "\n" << workflow_command("::endgroup::") << "\n";
    if (!ok) {
      out_ << workflow_command(
                  fmt::format("::error title={}::{}", escape_property(id), escape_data(line)))
           << "\n";
    }
    out_ << std::flush;
    lines_.erase(id);
  }
  void stop() override {}

 private:
  std::ostream& out_;
  LogEcho logs_;
  std::mutex mutex_;
  std::map<std::string, Clock::time_point> started_;
  std::map<std::string, std::vector<std::string>> lines_;
};

// --quiet: the failures of another display, nothing else.
class FailuresOnly : public backend::Status {
 public:
  explicit FailuresOnly(std::unique_ptr<backend::Status> inner) : inner_(std::move(inner)) {}
  void phase(const std::string&, const std::string&) override {}
  void note(const std::string&, const std::string&) override {}
  void log_line(const std::string&, std::string_view) override {}
  void finished(const std::string& id, bool ok, const std::string& line) override {
    if (!ok) inner_->finished(id, ok, line);
  }
  void stop() override { inner_->stop(); }

 private:
  std::unique_ptr<backend::Status> inner_;
};

class LiveProgress : public backend::Status {
 public:
  LiveProgress(std::ostream& out, bool color, LogEcho logs)
      : out_(out), color_(color), logs_(logs), drawer_([this] { draw_loop(); }) {}
  ~LiveProgress() override { stop(); }
  void phase(const std::string& id, const std::string& phase) override {
    std::lock_guard lock(mutex_);
    auto [it, added] = running_.try_emplace(id, Row{Clock::now(), phase});
    it->second.phase = phase;
    redraw_locked();
  }
  void note(const std::string& id, const std::string& line) override {
    std::lock_guard lock(mutex_);
    above_locked(fmt::format("{}: {}", id, line));
  }
  void log_line(const std::string& id, std::string_view line) override {
    if (logs_ != LogEcho::off) note(id, std::string(line));
  }
  void finished(const std::string& id, bool ok, const std::string& line) override {
    std::lock_guard lock(mutex_);
    running_.erase(id);
    const std::string mark = !color_ ? (ok ? "✓" : "✗")
                                     : terminal_control(ok ? "\033[32m" : "\033[31m") +
                                           (ok ? "✓" : "✗") + terminal_control("\033[0m");
    above_locked(fmt::format("{} {}: {}", mark, id, line));
  }
  void stop() override {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
      clear_locked();
    }
    wake_.notify_all();
    if (drawer_.joinable()) drawer_.join();
  }

 private:
  struct Row {
    Clock::time_point start;
    std::string phase;
  };
  void clear_locked() {
    for (std::size_t i = 0; i < drawn_; ++i)
      out_ << terminal_control("\033[1A\033[2K");  // up one line, erase it
    drawn_ = 0;
  }
  void above_locked(const std::string& line) {
    clear_locked();
    out_ << line << "\n";
    redraw_locked();
  }
  void redraw_locked() {
    if (stopped_) return;
    clear_locked();
    for (const auto& [id, row] : running_) {
      const std::string timer = fmt::format("{:>5.0f} s", since(row.start));
      out_ << "  "
           << (color_ ? terminal_control("\033[36m") + timer + terminal_control("\033[0m") : timer)
           << "  " << id << "  " << row.phase << "\n";
      ++drawn_;
    }
    out_ << std::flush;
  }
  void draw_loop() {
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      wake_.wait_for(lock, std::chrono::milliseconds(500));
      if (!stopped_) redraw_locked();
    }
  }
  std::ostream& out_;
  bool color_;
  LogEcho logs_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, Row> running_;
  std::size_t drawn_ = 0;
  bool stopped_ = false;
  std::thread drawer_;  // last: starts after the members it uses
};

}  // namespace

std::unique_ptr<backend::Status> make_progress(ProgressStyle style, std::ostream& out,
                                               ProgressOptions options) {
  std::unique_ptr<backend::Status> display;
  switch (style) {
    case ProgressStyle::live:
      display = std::make_unique<LiveProgress>(out, options.color, options.logs);
      break;
    case ProgressStyle::github:
      display = std::make_unique<GithubProgress>(out, options.logs);
      break;
    case ProgressStyle::plain:
      display = std::make_unique<PlainProgress>(out, options.logs);
      break;
  }
  if (options.quiet) return std::make_unique<FailuresOnly>(std::move(display));
  return display;
}

}  // namespace sagebuild::cli
