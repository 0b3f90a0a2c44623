#include "util/secrets.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <span>

#include "util/sha256.h"
#include "util/text.h"

namespace sagebuild {

std::string redact(std::string text, std::initializer_list<std::string_view> secrets) {
  for (const std::string_view secret : secrets) {
    if (secret.empty()) continue;
    for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3))
      text.replace(at, secret.size(), "***");
  }
  return text;
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets)
    text = redact(std::move(text), {secret});
  return text;
}

namespace {

std::string percent_decoded(std::string_view value) {
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '%' && i + 2 < value.size() &&
        std::isxdigit(static_cast<unsigned char>(value[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(value[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(value.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += value[i];
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> credential_forms(std::string_view username, std::string_view password) {
  std::vector<std::string> forms;
  // Short values would mask ordinary words ("a", "__token__" stays: it is the user name PyPI
  // uses for every token and carries no secret).
  auto add = [&](std::string form) {
    if (form.size() >= 4 && form != "__token__") forms.push_back(std::move(form));
  };
  add(std::string(password));
  add(text::percent_encode(password));
  if (!password.empty() && username != "__token__") add(std::string(username));
  // Basic auth's base64 of "user:password", in the URL-safe alphabet and the standard one
  // (the same text with two letters swapped), without padding.
  const std::string pair = std::string(username) + ":" + std::string(password);
  const std::string url_safe =
      base64url_nopad(std::span(reinterpret_cast<const std::uint8_t*>(pair.data()), pair.size()));
  std::string standard = url_safe;
  std::replace(standard.begin(), standard.end(), '-', '+');
  std::replace(standard.begin(), standard.end(), '_', '/');
  add(url_safe);
  add(standard);
  // Longest first: a shorter form inside a longer one must not leave the rest of it behind.
  std::sort(forms.begin(), forms.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return forms;
}

std::pair<std::string, std::string> url_credentials(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  const std::size_t host_start = scheme + 3;
  const std::size_t path = url.find('/', host_start);
  const std::size_t at = url.rfind('@', path);
  if (at == std::string_view::npos || at < host_start) return {};
  const std::string_view userinfo = url.substr(host_start, at - host_start);
  const std::size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) return {"", percent_decoded(userinfo)};
  return {percent_decoded(userinfo.substr(0, colon)), percent_decoded(userinfo.substr(colon + 1))};
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

namespace {

// Variables whose whole value is a credential.
constexpr const char* kSecretVariables[] = {
    "GITHUB_TOKEN",          "GH_TOKEN",
    "TWINE_PASSWORD",        "SAGEBUILD_PUBLISH_PASSWORD",
    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"};
// Variables holding URLs (several, separated by white space; ccache's may carry "|key=value"
// attributes) whose user information may be a credential.
constexpr const char* kUrlVariables[] = {"CCACHE_REMOTE_STORAGE",  "CCACHE_SECONDARY_STORAGE",
                                         "PIP_INDEX_URL",          "PIP_EXTRA_INDEX_URL",
                                         "UV_INDEX_URL",           "UV_EXTRA_INDEX_URL",
                                         "UV_DEFAULT_INDEX",       "UV_INDEX",
                                         "SCCACHE_REDIS",          "SCCACHE_REDIS_ENDPOINT",
                                         "SCCACHE_WEBDAV_ENDPOINT"};

}  // namespace

std::vector<std::string> secrets_of_environment(
    const std::function<const char*(const char*)>& getenv) {
  std::vector<std::string> found;
  auto add = [&](const std::vector<std::string>& forms) {
    found.insert(found.end(), forms.begin(), forms.end());
  };
  for (const char* name : kSecretVariables) {
    if (const char* value = getenv(name); value && *value) add(credential_forms("", value));
  }
  for (const char* name : kUrlVariables) {
    const char* value = getenv(name);
    if (!value) continue;
    std::string words = value;
    std::replace_if(
        words.begin(), words.end(), [](unsigned char c) { return std::isspace(c); }, ' ');
    for (const std::string& word : text::split(words, ' ')) {
      const auto [user, password] = url_credentials(word.substr(0, word.find('|')));
      if (!user.empty() || !password.empty()) add(credential_forms(user, password));
    }
  }
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

const std::vector<std::string>& environment_secrets() {
  static const std::vector<std::string> secrets =
      secrets_of_environment([](const char* name) { return std::getenv(name); });
  return secrets;
}

std::string redact_environment_secrets(std::string text) {
  const auto& secrets = environment_secrets();
  if (secrets.empty()) return text;
  return redact(std::move(text), secrets);
}

}  // namespace sagebuild
