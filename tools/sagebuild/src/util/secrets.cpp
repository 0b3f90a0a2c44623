#include "util/secrets.h"

namespace sagebuild {

std::string redact(std::string text, std::initializer_list<std::string_view> secrets) {
  for (const std::string_view secret : secrets) {
    if (secret.empty()) continue;
    for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3))
      text.replace(at, secret.size(), "***");
  }
  return text;
}

}  // namespace sagebuild
