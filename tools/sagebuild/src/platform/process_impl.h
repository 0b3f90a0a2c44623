// What process_posix.cpp and process_win32.cpp share with process.cpp; not for other rooms.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "platform/process.h"

namespace sagebuild::platform::detail {

// Starts `program` (found in PATH already) with argv, collects its output, waits for it and
// every descendant, stopping them all at the timeout or on request_stop(). Per OS.
Expected<ProcessResult> spawn_and_wait(const std::filesystem::path& program,
                                       const std::vector<std::string>& argv,
                                       const ProcessOptions& options);

// The child's output as it arrives: all of it to the log file, the last keep_output bytes kept.
class OutputCollector {
 public:
  OutputCollector(ProcessResult& result, const ProcessOptions& options);
  void add(const char* data, std::size_t size);
  void finish();  // trims the kept output to its size

 private:
  ProcessResult& result_;
  std::size_t keep_;
  std::ofstream log_;
};

}  // namespace sagebuild::platform::detail
