// An entry's log (build/logs/<id>.log): the whole story of one build, each phase, note, command
// and line of output and the verification report, for the user to read after it ends. Every line
// of a command or a report written here also goes to the status sink (backend/status.h), which
// is how --verbose shows a build's commands as they run; the layers below the backend get the log
// as a line sink (platform::LogLines), never as a file.
//
// While the entry runs the log is "<log>.partial" and takes its name only at the end (keep), so
// an interrupted or crashed run never leaves a log that looks finished, and a run that stops
// early does not erase the last one before it ends.
#pragma once

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>

#include "backend/status.h"
#include "platform/process.h"

namespace sagebuild::backend {

class EntryLog {
 public:
  // Starts an empty "<path>.partial"; `id` names the log to the status sink.
  EntryLog(Status& status, std::string id, std::filesystem::path path);
  EntryLog(const EntryLog&) = delete;
  EntryLog& operator=(const EntryLog&) = delete;

  // The status's phase and note, written here as "== name" and "sagebuild: line" (the status
  // has them already: not again as log lines).
  void phase(const std::string& name);
  void note(const std::string& line);
  void line(std::string_view line);  // a log line, here and the status's log_line; masked
  void text(std::string_view text);  // several lines (a report), each as line()
  // For run_process (ProcessOptions::log) and the layers below: each line as line(). Valid while
  // this object lives.
  platform::LogLines sink();

  // The name the log will have: what messages give the user; and the one it has while it runs.
  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& partial() const { return partial_; }
  // Ends the log: renamed to path() (its name, returned), or left as the partial (returned) when
  // the rename fails.
  std::filesystem::path keep();
  void discard();  // nothing worth a log happened: the partial goes, the last log stays

 private:
  std::string write(std::string_view line);  // to the file only; returns it masked
  void close();
  Status& status_;
  std::string id_;
  std::filesystem::path path_;
  std::filesystem::path partial_;
  std::mutex mutex_;
  std::ofstream file_;
};

}  // namespace sagebuild::backend
