// Keeping secrets out of text: every message that may contain server-supplied or transport text
// passes through redact() with the secrets in play before it is printed.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sagebuild {

// `text` with each non-empty secret replaced by "***".
std::string redact(std::string text, std::initializer_list<std::string_view> secrets);

// The same, with every secret of a list.
std::string redact(std::string text, const std::vector<std::string>& secrets);

// Every spelling in which a credential can come back in a message: the user name and password
// themselves (a password also percent-encoded, as it sits in a URL), and the base64 of
// "user:password" that HTTP basic auth sends (a server that echoes the request shows it), both
// alphabets. Pass the result to redact().
std::vector<std::string> credential_forms(std::string_view username, std::string_view password);

// The user name and password a URL carries ("https://user:pass@host/"), percent-decoded;
// empty when it carries none.
std::pair<std::string, std::string> url_credentials(std::string_view url);

// Every secret this process's environment holds, in each spelling credential_forms() knows,
// longest first: the values of variables named as credentials (is_credential_variable) and the
// credentials in the URLs any variable holds (ccache's remote storages, pip's and uv's indexes).
// Read once, at first use. What sagebuild prints (cli/log_safe_stream), writes for GitHub (step
// summary, outputs) and what child processes write into logs and results (platform/process)
// pass through it: a tool that quotes its configuration in an error (ccache names its remote
// storage's URL, password and all) cannot carry a secret out.
const std::vector<std::string>& environment_secrets();
// The same for any environment, as (name, value) pairs: testable.
std::vector<std::string> secrets_of_environment(
    const std::vector<std::pair<std::string, std::string>>& environment);

// Whether a variable's name says its value is a credential: *_PASSWORD, *_TOKEN, *_KEY,
// *_SECRET*, *_CREDENTIALS, ... (by pattern, not a list: SCCACHE_REDIS_PASSWORD,
// AWS_SECRET_ACCESS_KEY and UV_PUBLISH_TOKEN are all caught).
bool is_credential_variable(std::string_view name);

// The length of the longest environment secret (0 without any).
std::size_t longest_environment_secret();

// For a stream written in pieces: masks `pending` and returns all of it but the last
// longest_environment_secret() - 1 bytes, which stay in `pending` so that a secret cut by the
// piece's end is masked whole with the next piece.
std::string take_redacted(std::string& pending);

// `text` with the environment's secrets replaced by "***".
std::string redact_environment_secrets(std::string text);

// A URL fit to print: "https://user:token@host/x" -> "https://user:***@host/x",
// "https://token@host/x" -> "https://***@host/x" (index URLs carry credentials that way).
std::string redact_url(std::string_view url);

}  // namespace sagebuild
