#include "util/secrets.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace sagebuild {
namespace {

TEST_CASE("credentials in URLs are masked, other URLs kept", "[secrets]") {
  CHECK(redact_url("https://user:s3cret@host.example/simple/") ==
        "https://user:***@host.example/simple/");
  CHECK(redact_url("https://tok3n@host.example/simple/") == "https://***@host.example/simple/");
  CHECK(redact_url("https://host.example/a@b") == "https://host.example/a@b");
  CHECK(redact_url("/srv/wheels") == "/srv/wheels");
  CHECK(redact("a s3cret b", {"s3cret", ""}) == "a *** b");
}

TEST_CASE("credentials are masked in every spelling a server can echo", "[secrets]") {
  const auto forms = credential_forms("alice", "p@ss w0rd");
  // "alice:p@ss w0rd" in base64, as an Authorization: Basic header carries it.
  const std::string echoed =
      "Authorization: Basic YWxpY2U6cEBzcyB3MHJk\nurl http://alice:p%40ss%20w0rd@host/ pw p@ss "
      "w0rd";
  const std::string clean = redact(echoed, forms);
  CHECK(clean.find("YWxpY2U6cEBzcyB3MHJk") == std::string::npos);
  CHECK(clean.find("p%40ss%20w0rd") == std::string::npos);
  CHECK(clean.find("p@ss w0rd") == std::string::npos);
  CHECK(clean.find("alice") == std::string::npos);
  CHECK(url_credentials("https://alice:p%40ss@host/x@y") ==
        std::pair<std::string, std::string>{"alice", "p@ss"});
  CHECK(url_credentials("https://t0ken@host/") == std::pair<std::string, std::string>{"", "t0ken"});
  CHECK(url_credentials("https://host/a@b").first.empty());
}

TEST_CASE("the environment's secrets: credential variables and the credentials in server URLs",
          "[secrets]") {
  const std::map<std::string, std::string> env = {
      {"TWINE_PASSWORD", "pypi-AgEIcHlwaS5vcmc"},
      {"CCACHE_REMOTE_STORAGE",
       "redis://r3dispassw0rd@10.0.0.1:6379|connect-timeout=50  "
       "http://cacheuser:h77ppass@c.example/x "
       "file:///mnt/cache"},
      {"PIP_EXTRA_INDEX_URL", "https://__token__:idx-t0ken@idx.example/simple"},
      {"PIP_INDEX_URL", "https://pypi.example/simple"},  // no credentials: nothing
      {"GH_TOKEN", "abc"},                               // too short to mask ordinary text
      {"HOME", "/root/secretless"}};                     // not a credential variable
  const auto secrets = secrets_of_environment({env.begin(), env.end()});
  const std::string leaked =
      "ccache: error: Cannot parse URL redis://r3dispassw0rd@:6379 "
      "(TWINE_PASSWORD=pypi-AgEIcHlwaS5vcmc; "
      "https://cacheuser:h77ppass@c.example/x; idx-t0ken; /root/secretless; abc)";
  CHECK(redact(leaked, secrets) ==
        "ccache: error: Cannot parse URL redis://***@:6379 (TWINE_PASSWORD=***; "
        "https://***:***@c.example/x; ***; /root/secretless; abc)");
  // Longest first, so that a secret inside another leaves nothing of the longer one behind.
  CHECK(std::is_sorted(
      secrets.begin(), secrets.end(),
      [](const std::string& a, const std::string& b) { return a.size() > b.size(); }));
}

TEST_CASE("credential variables are known by their names' patterns, URLs in any variable",
          "[secrets]") {
  for (const char* name :
       {"SCCACHE_WEBDAV_PASSWORD", "SCCACHE_REDIS_PASSWORD", "AWS_SECRET_ACCESS_KEY",
        "UV_PUBLISH_TOKEN", "TWINE_PASSWORD", "GITHUB_TOKEN", "MY_API_KEY", "ci_deploy_token",
        "AZURE_CLIENT_SECRET", "GOOGLE_APPLICATION_CREDENTIALS", "HF_TOKEN", "DB_PASSWD"}) {
    INFO(name);
    CHECK(is_credential_variable(name));
  }
  for (const char* name : {"HOME", "PATH", "TORCH_CUDA_ARCH_LIST", "KEYBOARD", "TOKENIZERS_DIR"}) {
    INFO(name);
    CHECK_FALSE(is_credential_variable(name));
  }
  const std::vector<std::pair<std::string, std::string>> env = {
      {"SCCACHE_WEBDAV_PASSWORD", "w3bdav/pass"},
      {"AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI"},
      {"SAGEBUILD_NO_TOKEN", "true"},  // a flag, not a secret
      {"MY_MIRROR", "see https://mirroruser:m1rr0r@mirror.example/simple, please"}};
  const auto secrets = secrets_of_environment(env);
  const std::string leaked =
      "webdav w3bdav/pass w3bdav%2fpass w3bdav%2Fpass aws wJalrXUtnFEMI mirror m1rr0r true";
  CHECK(redact(leaked, secrets) == "webdav *** *** *** aws *** mirror *** true");
}

TEST_CASE("a secret cut by a piece's end is held back and masked whole", "[secrets]") {
  // take_redacted() uses this process's environment: hold back nothing without secrets, and
  // never lose a byte.
  std::string pending = "0123456789";
  const std::string out = take_redacted(pending);
  CHECK(out + pending == "0123456789");
  CHECK(pending.size() + 1 <= std::max<std::size_t>(1, longest_environment_secret()));
}

}  // namespace
}  // namespace sagebuild
