// --timeout/--retries/... of the commands that talk to servers (release, publish).
#pragma once

#include <chrono>
#include <cmath>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "net/http.h"
#include "net/retry.h"
#include "platform/process.h"
#include "util/log.h"

namespace sagebuild::cli {

struct NetworkFlags {
  int timeout = 60;          // seconds without progress before a transfer is abandoned
  int retries = 5;           // further attempts after the first
  double retry_wait = 1.0;   // first backoff, seconds (doubled each time)
  int retry_max_wait = 900;  // longest rate-limit wait accepted, seconds

  // Each bound keeps the arithmetic below (seconds to milliseconds, attempts + 1) in range;
  // NaN and infinities fail the finite check before the range is compared.
  void add_to(CLI::App* cmd) {
    cmd->add_option("--timeout", timeout, "seconds below 1 KiB/s before a transfer fails (1-86400)")
        ->check(CLI::Range(1, 86400))
        ->capture_default_str();
    cmd->add_option("--retries", retries, "further attempts after network errors, 5xx, 429 (0-100)")
        ->check(CLI::Range(0, 100))
        ->capture_default_str();
    cmd->add_option("--retry-wait", retry_wait,
                    "first backoff in seconds, doubled per retry (0-3600)")
        ->check(finite_seconds(3600))
        ->capture_default_str();
    cmd->add_option("--retry-max-wait", retry_max_wait,
                    "longest rate-limit wait to sit out, in seconds (0-86400)")
        ->check(CLI::Range(0, 86400))
        ->capture_default_str();
  }

  static CLI::Validator finite_seconds(double most) {
    return CLI::Validator(
        [most](const std::string& text) -> std::string {
          double value = 0;
          try {
            std::size_t used = 0;
            value = std::stod(text, &used);
            if (used != text.size()) return "not a number: " + text;
          } catch (const std::exception&) {
            return "not a number: " + text;
          }
          if (!std::isfinite(value) || value < 0 || value > most) {
            return "must be a number of seconds from 0 to " +
                   std::to_string(static_cast<int>(most));
          }
          return "";
        },
        "SECONDS");
  }

  void apply(net::HttpOptions& http, net::RetryPolicy& retry, Log& log) const {
    http.stall_timeout = std::chrono::seconds(std::max(1, timeout));
    http.user_agent = std::string("sagebuild/") + SAGEBUILD_VERSION;
    retry.max_attempts = std::max(1, retries + 1);
    retry.first_backoff = std::chrono::milliseconds(static_cast<long>(retry_wait * 1000));
    retry.max_wait = std::chrono::seconds(retry_max_wait);
    retry.note = [&log](const std::string& line) { log.warning("sagebuild: {}\n", line); };
    // Ctrl-C (with the command's platform::InterruptGuard) aborts the transfer in flight.
    http.cancelled = [] { return platform::stop_requested(); };
  }
};

}  // namespace sagebuild::cli
