#include "net/retry.h"

#include <catch2/catch.hpp>

#include "util/secrets.h"

namespace sagebuild::net {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

HttpResponse response(long status, std::map<std::string, std::string> headers = {}) {
  return HttpResponse{status, std::move(headers), "", false};
}

TEST_CASE("server errors back off exponentially up to a cap", "[retry]") {
  RetryPolicy p;
  p.first_backoff = milliseconds(100);
  p.max_backoff = milliseconds(350);
  CHECK(retry_delay(response(502), 1, p, 0) == milliseconds(100));
  CHECK(retry_delay(response(503), 2, p, 0) == milliseconds(200));
  CHECK(retry_delay(response(500), 3, p, 0) == milliseconds(350));
  CHECK_FALSE(retry_delay(response(501), 1, p, 0));  // not implemented: final
  CHECK_FALSE(retry_delay(response(404), 1, p, 0));
  CHECK_FALSE(retry_delay(response(422), 1, p, 0));
  CHECK_FALSE(retry_delay(response(201), 1, p, 0));
}

TEST_CASE("hostile rate-limit headers: no overflow, no crash", "[retry]") {
  RetryPolicy p;
  p.max_wait = seconds(900);
  for (const char* reset : {"99999999999999999", "-99999999999999999", "soon", "", "1e30"}) {
    INFO(reset);
    const auto r = response(429, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", reset}});
    const auto wait = retry_delay(r, 1, p, 1'000'000);
    CHECK((!wait || *wait <= seconds(900)));
    const std::string when = rate_limit_reset_time(r);
    CHECK((when == "later" || when.starts_with("after ")));
  }
  CHECK(rate_limit_reset_time(response(429, {{"x-ratelimit-reset", "0"}})) ==
        "after 1970-01-01 00:00:00 UTC");
  CHECK(rate_limit_reset_time(response(429, {{"x-ratelimit-reset", "1795825932"}})) ==
        "after 2026-11-28 00:32:12 UTC");
  CHECK(rate_limit_reset_time(response(429, {{"x-ratelimit-reset", "951782400"}})) ==
        "after 2000-02-29 00:00:00 UTC");  // a leap day
  CHECK(rate_limit_reset_time(response(429, {{"x-ratelimit-reset", "253402300799"}})) ==
        "after 9999-12-31 23:59:59 UTC");
  CHECK(rate_limit_reset_time(response(429, {{"x-ratelimit-reset", "253402300800"}})) == "later");
  CHECK_FALSE(retry_delay(response(429, {{"retry-after", "9223372036854775807"}}), 1, p, 0));
}

TEST_CASE("rate limits wait as the server says", "[retry]") {
  RetryPolicy p;
  p.max_wait = seconds(120);
  // Secondary limit: retry-after.
  CHECK(retry_delay(response(403, {{"retry-after", "7"}}), 1, p, 0) == seconds(7));
  CHECK(retry_delay(response(429, {{"retry-after", "3"}}), 1, p, 0) == seconds(3));
  // Primary limit: remaining 0 until the reset time (+1 s for clock granularity).
  const auto primary =
      response(403, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "1000060"}});
  CHECK(retry_delay(primary, 1, p, 1000000) == seconds(61));
  // Further away than max_wait: give up now rather than hang.
  CHECK_FALSE(retry_delay(primary, 1, p, 999000));
  // A 403 that is not a rate limit (no permission) is final.
  CHECK_FALSE(retry_delay(response(403, {{"x-ratelimit-remaining", "4999"}}), 1, p, 0));
  CHECK_FALSE(is_rate_limited(response(403)));
  CHECK(is_rate_limited(response(429)));
}

TEST_CASE("transport errors are retried and the last outcome returned", "[retry]") {
  RetryPolicy p;
  p.max_attempts = 3;
  p.first_backoff = milliseconds(1);
  std::vector<milliseconds> slept;
  p.sleep = [&](milliseconds d) { slept.push_back(d); };
  std::vector<std::string> notes;
  p.note = [&](const std::string& n) { notes.push_back(n); };
  HttpRequest req;
  req.url = "http://127.0.0.1:1/unreachable";  // port 1: refused at once
  auto r = perform_with_retries(req, {}, p);
  REQUIRE_FALSE(r);
  CHECK(slept.size() == 2);
  CHECK(notes.size() == 2);
  CHECK_THAT(notes[0], Catch::Contains("attempt 2 of 3"));
}

TEST_CASE("a cancelled call stops during its backoff and is not retried", "[retry]") {
  RetryPolicy p;
  p.max_attempts = 5;
  p.first_backoff = milliseconds(10'000);
  std::vector<milliseconds> slept;
  bool stop = false;
  p.sleep = [&](milliseconds d) {
    slept.push_back(d);
    stop = true;  // Ctrl-C arrives during the first wait
  };
  HttpOptions options;
  options.cancelled = [&] { return stop; };
  HttpRequest req;
  req.url = "http://127.0.0.1:1/unreachable";
  auto r = perform_with_retries(req, options, p);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("interrupted"));
  CHECK(r.error().kind == ErrorKind::interrupted);  // a command ends with exit code 130 on it
  REQUIRE(slept.size() == 1);  // one short step of the 10 s wait, then no second attempt
  CHECK(slept[0] <= milliseconds(200));
}

TEST_CASE("secrets are redacted wherever they occur", "[secrets]") {
  CHECK(redact("token abc in abcabc", {"abc"}) == "token *** in ******");
  CHECK(redact("nothing", {"", "zzz"}) == "nothing");
}

}  // namespace
}  // namespace sagebuild::net
