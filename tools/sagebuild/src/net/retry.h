// Retries for HTTP requests: transport errors and 5xx back off exponentially; rate limits wait
// as the server says (retry-after; x-ratelimit-remaining 0 until x-ratelimit-reset), the rules
// GitHub documents for its primary and secondary limits, which other registries share.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "net/http.h"

namespace sagebuild::net {

struct RetryPolicy {
  int max_attempts = 6;
  std::chrono::milliseconds first_backoff{1000};  // doubled per attempt
  std::chrono::milliseconds max_backoff{30000};
  std::chrono::seconds max_wait{900};  // a rate-limit wait longer than this ends the retries
  std::function<void(std::chrono::milliseconds)> sleep;  // default: sleep the thread
  std::function<void(const std::string&)> note;          // one line per retry, for the log
};

// How long to wait before trying `response` again, or nullopt when it is final. `attempt` is
// 1 for the first try; `now` is Unix time in seconds (for x-ratelimit-reset).
std::optional<std::chrono::milliseconds> retry_delay(const HttpResponse& response, int attempt,
                                                     const RetryPolicy& policy, std::int64_t now);

// Whether a response is a rate limit (GitHub answers 403 or 429).
bool is_rate_limited(const HttpResponse& response);

// perform() until a final response, a non-retryable outcome, or the attempts run out. The last
// response (or transport error) is returned. A request body streamed from a file is re-read
// from the start on each attempt.
Expected<HttpResponse> perform_with_retries(const HttpRequest& request, const HttpOptions& options,
                                            const RetryPolicy& policy);

// "after 2026-11-27 14:03:00 UTC" from a rate-limited response's x-ratelimit-reset, or "later"
// when the header is missing, not a number, or outside the years a calendar can print.
std::string rate_limit_reset_time(const HttpResponse& r);

}  // namespace sagebuild::net
