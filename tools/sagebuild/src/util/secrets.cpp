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

std::string redact_url(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const std::size_t host_start = scheme + 3;
  const std::size_t path = url.find('/', host_start);
  const std::size_t at = url.rfind('@', path);
  if (at == std::string_view::npos || at < host_start) return std::string(url);
  const std::size_t colon = url.find(':', host_start);
  if (colon == std::string_view::npos || colon > at) {
    // "https://TOKEN@host": the user name is the secret.
    return std::string(url.substr(0, host_start)) + "***" + std::string(url.substr(at));
  }
  return std::string(url.substr(0, colon)) + ":***" + std::string(url.substr(at));
}

}  // namespace sagebuild
