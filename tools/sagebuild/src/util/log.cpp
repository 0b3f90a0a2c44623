#include "util/log.h"

namespace sagebuild {

void Log::write(std::ostream& stream, std::string_view text) {
  const std::lock_guard<std::mutex> lock(mutex_);
  stream << text;
  stream.flush();
}

}  // namespace sagebuild
