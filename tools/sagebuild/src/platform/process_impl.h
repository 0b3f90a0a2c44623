// What process_posix.cpp and process_win32.cpp share with process.cpp; not for other rooms.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "platform/process.h"

namespace sagebuild::platform::detail {

// Starts `program` (found in PATH already) with argv, collects its output, waits for it and
// every descendant, stopping them all at the timeout or on request_stop(). Per OS.
Expected<ProcessResult> spawn_and_wait(const std::filesystem::path& program,
                                       const std::vector<std::string>& argv,
                                       const ProcessOptions& options);

// The child's output as it arrives: line by line to ProcessOptions::log and on_line, the last
// keep_output bytes kept.
class OutputCollector {
 public:
  OutputCollector(ProcessResult& result, const ProcessOptions& options);
  void add(const char* data, std::size_t size);
  void finish();  // trims the kept output to its size, hands on the last unfinished line

 private:
  void pass_line();  // line_, masked, to log and on_line
  ProcessResult& result_;
  std::size_t keep_;
  std::function<void(std::string_view)> log_;
  std::function<void(std::string_view)> on_line_;
  std::string line_;  // the unfinished line
};

}  // namespace sagebuild::platform::detail
