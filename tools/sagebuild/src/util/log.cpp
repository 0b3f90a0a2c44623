#include "util/log.h"

namespace sagebuild {

Log& Log::discard() {
  // Streams without a buffer drop what is written to them; nothing is shown at any level but
  // results, which go there too.
  static std::ostream nowhere(nullptr);
  static Log log(nowhere, nowhere, Level::error);
  return log;
}

void Log::write(std::ostream& stream, std::string_view text) {
  const std::lock_guard<std::mutex> lock(mutex_);
  stream << text;
  stream.flush();
}

}  // namespace sagebuild
