#include "net/http.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <curl/curl.h>
#include <fmt/format.h>

#include "util/secrets.h"
#include "util/text.h"

namespace sagebuild::net {
namespace {

constexpr long kLowSpeed = 1024;  // bytes per second

// curl_global_init is not thread-safe and must run once before any handle exists.
void ensure_curl() {
  static const bool initialized = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    std::atexit(curl_global_cleanup);
    return true;
  }();
  (void)initialized;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
  void operator()(curl_mime* m) const { curl_mime_free(m); }
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// The body, up to a limit: past it the transfer stops (curl's write error), so that a hostile
// or broken server cannot fill memory with an error page.
struct BodySink {
  std::string* body;
  std::size_t limit;
  bool truncated = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const std::size_t n = size * count;
  if (sink->body->size() + n > sink->limit) {
    sink->body->append(data, sink->limit - sink->body->size());
    sink->truncated = true;
    return 0;
  }
  sink->body->append(data, n);
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  const std::string_view line(data, size * count);
  // A new status line starts a new response (after a redirect or "100 Continue").
  if (line.starts_with("HTTP/")) {
    headers->clear();
  } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    (*headers)[text::ascii_lower(text::trim(line.substr(0, colon)))] =
        std::string(text::trim(line.substr(colon + 1)));
  }
  return size * count;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancelled = static_cast<const std::function<bool()>*>(user);
  return (*cancelled)() ? 1 : 0;  // non-zero: CURLE_ABORTED_BY_CALLBACK
}

std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
  return std::fread(buffer, size, count, static_cast<std::FILE*>(user));
}

}  // namespace

std::string url_origin(std::string_view url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return "";
  const std::size_t host_start = scheme_end + 3;
  std::size_t end = url.find_first_of("/?#", host_start);
  if (end == std::string_view::npos) end = url.size();
  std::string_view authority = url.substr(host_start, end - host_start);
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  if (authority.empty()) return "";
  std::string origin = std::string(url.substr(0, scheme_end)) + "://" + std::string(authority);
  for (char& c : origin)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return origin;
}

std::string HttpResponse::header(const std::string& lower_name) const {
  const auto found = headers.find(lower_name);
  return found == headers.end() ? std::string() : found->second;
}

Expected<HttpResponse> perform(const HttpRequest& request, const HttpOptions& options) {
  ensure_curl();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return Error{"cannot start an HTTP client (curl_easy_init failed)"};
  CURL* c = curl.get();
  char error_buffer[CURL_ERROR_SIZE] = {};
  HttpResponse response;

  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  // Redirects are followed (except for uploads); curl does not carry a custom Authorization
  // header to another host.
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options.connect_timeout.count()));
  // Below kLowSpeed bytes a second for the whole stall window: abandoned. A server that trickles
  // a byte now and then is cut off as surely as one that sends nothing.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, kLowSpeed);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.stall_timeout.count()));
  if (!options.user_agent.empty())
    curl_easy_setopt(c, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  BodySink sink{&response.body, options.max_body_bytes};
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &response.headers);

  std::unique_ptr<curl_slist, CurlDeleter> headers;
  auto add_header = [&](const std::string& h) {
    headers.reset(curl_slist_append(headers.release(), h.c_str()));
  };
  for (const std::string& h : request.headers)
    add_header(h);
  add_header("Expect:");  // no "100-continue" round trip before bodies

  if (!request.username.empty() || !request.password.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, request.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, request.password.c_str());
  } else if (request.use_netrc) {
    curl_easy_setopt(c, CURLOPT_NETRC, static_cast<long>(CURL_NETRC_OPTIONAL));
    if (const char* file = std::getenv("NETRC"); file && *file)
      curl_easy_setopt(c, CURLOPT_NETRC_FILE, file);
  }

  std::unique_ptr<std::FILE, CurlDeleter> upload;
  std::unique_ptr<curl_mime, CurlDeleter> mime;
  if (!request.body_file.empty()) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(request.body_file, ec);
    upload.reset(std::fopen(request.body_file.string().c_str(), "rb"));
    if (ec || !upload) return Error{fmt::format("cannot read {}", request.body_file.string())};
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(c, CURLOPT_READDATA, upload.get());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(size));
  } else if (!request.form.empty()) {
    mime.reset(curl_mime_init(c));
    for (const FormPart& part : request.form) {
      curl_mimepart* p = curl_mime_addpart(mime.get());
      curl_mime_name(p, part.name.c_str());
      if (!part.file.empty()) {
        if (curl_mime_filedata(p, part.file.string().c_str()) != CURLE_OK)
          return Error{fmt::format("cannot read {}", part.file.string())};
        curl_mime_filename(p, part.filename.c_str());
      } else {
        curl_mime_data(p, part.value.data(), part.value.size());
      }
      if (!part.content_type.empty()) curl_mime_type(p, part.content_type.c_str());
    }
    curl_easy_setopt(c, CURLOPT_MIMEPOST, mime.get());
  } else if (!request.body.empty() || request.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  if (request.method != "GET" && request.method != "POST")
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (options.cancelled) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &options.cancelled);
  }

  const CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_ABORTED_BY_CALLBACK) {
    return Error{fmt::format("{} {}: {}", request.method, redact_url(request.url), kInterrupted),
                 ErrorKind::interrupted};
  }
  if (rc == CURLE_WRITE_ERROR && sink.truncated) {
    // A response all the same: its status decides, its body is cut at the limit.
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
    response.body_truncated = true;
    return response;
  }
  if (rc != CURLE_OK) {
    return Error{fmt::format("{} {}: {}", request.method, redact_url(request.url),
                             *error_buffer ? error_buffer : curl_easy_strerror(rc))};
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace sagebuild::net
