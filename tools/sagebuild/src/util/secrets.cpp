#include "util/secrets.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <unistd.h>  // environ
#endif

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
  // Percent-encoded as a URL carries it, with upper-case hex digits and with lower-case ones
  // (RFC 3986 allows both; clients differ).
  const std::string encoded = text::percent_encode(password);
  add(encoded);
  std::string lower = encoded;
  for (std::size_t i = 0; i + 2 < lower.size(); ++i) {
    if (lower[i] != '%') continue;
    lower[i + 1] = static_cast<char>(std::tolower(static_cast<unsigned char>(lower[i + 1])));
    lower[i + 2] = static_cast<char>(std::tolower(static_cast<unsigned char>(lower[i + 2])));
  }
  if (lower != encoded) add(lower);
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

bool is_credential_variable(std::string_view name) {
  const std::string upper = text::ascii_upper(name);
  // Whole names of common credentials without a telling suffix.
  for (const std::string_view exact :
       {"GITHUB_TOKEN", "GH_TOKEN", "TWINE_PASSWORD", "PASSWORD", "TOKEN", "SECRET", "API_KEY"}) {
    if (upper == exact) return true;
  }
  for (const std::string_view suffix :
       {"_PASSWORD", "_PASSWD", "_PASS", "_TOKEN", "_KEY", "_SECRET", "_CREDENTIALS", "_AUTH"}) {
    if (upper.ends_with(suffix)) return true;
  }
  // AWS_SECRET_ACCESS_KEY, MY_SECRET_VALUE, GOOGLE_APPLICATION_CREDENTIALS_JSON ...
  return upper.find("_SECRET") != std::string::npos || upper.find("SECRET_") != std::string::npos ||
         upper.find("PASSWORD") != std::string::npos || upper.find("_TOKEN_") != std::string::npos;
}

std::vector<std::string> secrets_of_environment(
    const std::vector<std::pair<std::string, std::string>>& environment) {
  std::vector<std::string> found;
  auto add = [&](const std::vector<std::string>& forms) {
    found.insert(found.end(), forms.begin(), forms.end());
  };
  for (const auto& [name, value] : environment) {
    // Flags that match a pattern by name ("SAGEBUILD_NO_TOKEN=1", "..._AUTH=true") are no
    // secret, and masking "true" would garble every log.
    const std::string lower = text::ascii_lower(value);
    const bool flag = lower == "true" || lower == "false" || lower == "yes" || lower == "none";
    if (is_credential_variable(name) && !flag) add(credential_forms("", value));
    // Any variable's URLs (several, separated by white space; ccache's may carry "|key=value"
    // attributes): their user information is a credential.
    if (value.find("://") == std::string::npos) continue;
    std::string words = value;
    std::replace_if(
        words.begin(), words.end(), [](unsigned char c) { return std::isspace(c) || c == ','; },
        ' ');
    for (const std::string& word : text::split(words, ' ')) {
      const std::size_t scheme = word.find("://");
      if (scheme == std::string::npos) continue;
      std::size_t start = scheme;  // the scheme's letters before "://"
      while (start > 0 &&
             (std::isalnum(static_cast<unsigned char>(word[start - 1])) || word[start - 1] == '+' ||
              word[start - 1] == '-' || word[start - 1] == '.'))
        --start;
      const std::string url = word.substr(start);
      const auto [user, password] = url_credentials(url.substr(0, url.find('|')));
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
  static const std::vector<std::string> secrets = [] {
    std::vector<std::pair<std::string, std::string>> environment;
    auto add = [&](std::string_view entry) {
      const std::size_t equals = entry.find('=', 1);  // Windows has "=C:=C:\\" entries
      if (equals != std::string_view::npos) {
        environment.emplace_back(entry.substr(0, equals), entry.substr(equals + 1));
      }
    };
#ifdef _WIN32
    // The block "name=value\0...\0\0" (the CRT's _environ is deprecated under /W4 /WX).
    if (char* block = GetEnvironmentStringsA()) {
      for (const char* entry = block; *entry; entry += std::strlen(entry) + 1)
        add(entry);
      FreeEnvironmentStringsA(block);
    }
#else
    for (char** variables = environ; variables && *variables; ++variables)
      add(*variables);
#endif
    return secrets_of_environment(environment);
  }();
  return secrets;
}

std::size_t longest_environment_secret() {
  const auto& secrets = environment_secrets();
  return secrets.empty() ? 0 : secrets.front().size();
}

std::string take_redacted(std::string& pending) {
  pending = redact_environment_secrets(std::move(pending));
  const std::size_t hold =
      std::min(pending.size(), longest_environment_secret() > 0 ? longest_environment_secret() - 1
                                                                : std::size_t{0});
  std::string out = pending.substr(0, pending.size() - hold);
  pending.erase(0, pending.size() - hold);
  return out;
}

std::string redact_environment_secrets(std::string text) {
  const auto& secrets = environment_secrets();
  if (secrets.empty()) return text;
  return redact(std::move(text), secrets);
}

}  // namespace sagebuild
