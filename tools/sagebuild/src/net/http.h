// HTTP for the commands that talk to servers (release, publish), on libcurl. One request per
// call; no retries here (net/retry.h decides those). Credentials go in headers or curl's auth
// options, never into URLs, and nothing here prints or logs a request: error texts carry the
// method, the URL (credentials redacted) and curl's reason only.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "util/expected.h"

namespace sagebuild::net {

struct FormPart {  // one multipart/form-data field: a value, or a file streamed from disk
  std::string name;
  std::string value;
  std::filesystem::path file;  // when set, sent as the field's content with `filename`
  std::string filename;
  std::string content_type;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // sent when non-empty (JSON)
  std::filesystem::path body_file;   // streamed as the body when set (release assets)
  std::vector<FormPart> form;        // multipart/form-data when non-empty (package uploads)
  std::string username;              // HTTP basic auth, when set
  std::string password;
  bool use_netrc = false;  // take credentials from ~/.netrc ($NETRC) when none are given
  // Off for uploads: a redirected POST is re-sent as a GET by HTTP clients (which then "succeeds"
  // without uploading anything) or carries the file to an address nobody configured.
  bool follow_redirects = true;
};

// "scheme://host[:port]" of a URL, lower-cased, without user information; empty when it has
// none. Credentials go only to the origins they were configured for.
std::string url_origin(std::string_view url);

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased; the last value wins
  std::string body;
  bool body_truncated = false;  // the server sent more than HttpOptions::max_body_bytes

  std::string header(const std::string& lower_name) const;
};

struct HttpOptions {
  std::chrono::seconds connect_timeout{30};
  // A transfer that moves less than 1 KiB a second for this long is abandoned (a stalled or
  // trickling server, a dropped connection), whatever its size: big uploads are not cut off.
  std::chrono::seconds stall_timeout{60};
  // The most of a response body kept; the transfer stops there (API answers and error pages
  // are small; release assets and wheels are uploaded, never downloaded here).
  std::size_t max_body_bytes = 16u << 20;
  std::string user_agent;
  // Checked while a transfer runs (a few times a second) and between retries: true aborts it,
  // and the call returns an error saying "interrupted" (Ctrl-C: the connection is closed, so a
  // server keeps no complete file of a half-sent upload).
  std::function<bool()> cancelled;
};

inline constexpr const char* kInterrupted = "interrupted";

// Errors are transport failures (cannot connect, timed out, connection reset): retryable.
// Any HTTP status, including 4xx and 5xx, is a response.
Expected<HttpResponse> perform(const HttpRequest& request, const HttpOptions& options);

}  // namespace sagebuild::net
