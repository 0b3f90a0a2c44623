#include "net/retry.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "util/secrets.h"

namespace sagebuild::net {
namespace {

std::optional<std::int64_t> header_number(const HttpResponse& r, const std::string& name) {
  const std::string v = r.header(name);
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

// A wait the server asked for, in seconds, kept far from the overflow of milliseconds: any
// wait past a day is longer than every --retry-max-wait.
constexpr std::int64_t kLongestWait = std::int64_t{2} * 86400;

std::chrono::milliseconds backoff(int attempt, const RetryPolicy& policy) {
  auto wait = policy.first_backoff;
  for (int i = 1; i < attempt && wait < policy.max_backoff; ++i)
    wait *= 2;
  return std::min(wait, policy.max_backoff);
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool is_rate_limited(const HttpResponse& r) {
  if (r.status == 429) return true;
  return r.status == 403 &&
         (!r.header("retry-after").empty() || r.header("x-ratelimit-remaining") == "0");
}

std::optional<std::chrono::milliseconds> retry_delay(const HttpResponse& r, int attempt,
                                                     const RetryPolicy& policy, std::int64_t now) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  std::optional<milliseconds> wait;
  if (is_rate_limited(r)) {
    if (auto after = header_number(r, "retry-after")) {
      wait = seconds(std::clamp<std::int64_t>(*after, 0, kLongestWait));
    } else if (auto reset = header_number(r, "x-ratelimit-reset");
               reset && r.header("x-ratelimit-remaining") == "0") {
      wait = seconds(std::clamp<std::int64_t>(*reset - std::min(*reset, now), 0, kLongestWait) + 1);
    } else {
      wait = backoff(attempt, policy);
    }
    if (*wait > policy.max_wait) return std::nullopt;
  } else if (r.status >= 500 && r.status != 501) {
    wait = backoff(attempt, policy);
  }
  return wait;
}

Expected<HttpResponse> perform_with_retries(const HttpRequest& request, const HttpOptions& options,
                                            const RetryPolicy& policy) {
  auto sleep = policy.sleep ? policy.sleep
                            : [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  const auto cancelled = [&] { return options.cancelled && options.cancelled(); };
  for (int attempt = 1;; ++attempt) {
    auto response = perform(request, options);
    if (cancelled()) {
      return Error{fmt::format("{} {}: {}", request.method, redact_url(request.url), kInterrupted),
                   ErrorKind::interrupted};
    }
    std::optional<std::chrono::milliseconds> wait;
    std::string why;
    if (!response) {
      wait = backoff(attempt, policy);
      why = response.error().message;
    } else {
      wait = retry_delay(*response, attempt, policy, unix_now());
      why =
          fmt::format("{} {}: HTTP {}", request.method, redact_url(request.url), response->status);
    }
    if (!wait || attempt >= policy.max_attempts) return response;
    if (policy.note) {
      policy.note(fmt::format("{}; retrying in {:.1f} s (attempt {} of {})", why,
                              static_cast<double>(wait->count()) / 1000.0, attempt + 1,
                              policy.max_attempts));
    }
    // Waited out in short steps, so that Ctrl-C during a long backoff stops at once.
    for (auto left = *wait; left.count() > 0 && !cancelled();) {
      const auto step = std::min(left, std::chrono::milliseconds(200));
      sleep(step);
      left -= step;
    }
  }
}

std::string rate_limit_reset_time(const HttpResponse& r) {
  const auto reset = header_number(r, "x-ratelimit-reset");
  // Years 1970-9999, in UTC, by <chrono>'s calendar (gmtime_r is POSIX, gmtime not
  // thread-safe).
  if (!reset || *reset < 0 || *reset > 253402300799) return "later";
  using namespace std::chrono;
  const sys_seconds t{seconds(*reset)};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss<seconds> time{t - day};
  return fmt::format("after {:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     time.hours().count(), time.minutes().count(), time.seconds().count());
}

}  // namespace sagebuild::net
