// --timeout/--retries/... of the commands that talk to servers (release, publish).
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "net/http.h"
#include "net/retry.h"

namespace sagebuild::cli {

struct NetworkFlags {
  int timeout = 60;          // seconds without progress before a transfer is abandoned
  int retries = 5;           // further attempts after the first
  double retry_wait = 1.0;   // first backoff, seconds (doubled each time)
  int retry_max_wait = 900;  // longest rate-limit wait accepted, seconds

  void add_to(CLI::App* cmd) {
    cmd->add_option("--timeout", timeout, "seconds without progress before a transfer fails")
        ->capture_default_str();
    cmd->add_option("--retries", retries, "further attempts after network errors, 5xx, 429")
        ->capture_default_str();
    cmd->add_option("--retry-wait", retry_wait, "first backoff in seconds, doubled per retry")
        ->capture_default_str();
    cmd->add_option("--retry-max-wait", retry_max_wait,
                    "longest rate-limit wait to sit out, in seconds")
        ->capture_default_str();
  }

  void apply(net::HttpOptions& http, net::RetryPolicy& retry, std::ostream& log) const {
    http.stall_timeout = std::chrono::seconds(std::max(1, timeout));
    http.user_agent = std::string("sagebuild/") + SAGEBUILD_VERSION;
    retry.max_attempts = std::max(1, retries + 1);
    retry.first_backoff = std::chrono::milliseconds(static_cast<long>(retry_wait * 1000));
    retry.max_wait = std::chrono::seconds(retry_max_wait);
    retry.note = [&log](const std::string& line) { log << "sagebuild: " << line << "\n"; };
  }
};

}  // namespace sagebuild::cli
