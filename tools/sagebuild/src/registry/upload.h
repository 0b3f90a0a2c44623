// `sagebuild publish`: uploads wheels to a PyPI-compatible registry through the upload API that
// twine uses (the "legacy" API: one multipart/form-data POST per file with the core metadata as
// fields), so GitHub Packages, devpi, pypiserver and Warehouse all take it. Credentials come
// from the caller (environment) or ~/.netrc through libcurl; never printed. A file the registry
// has already is compared by sha256 with the one given (its simple index lists the digest):
// the same bytes are skipped, different bytes are an error naming both digests.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "net/http.h"
#include "net/retry.h"
#include "util/expected.h"

namespace sagebuild::registry {

struct PublishRequest {
  std::string repository_url;  // the upload endpoint, e.g. http://127.0.0.1:8080/
  std::string username;        // with password: HTTP basic auth; both empty: ~/.netrc
  std::string password;
  // Where the registry lists its files (PEP 503), for the digests of files it has already;
  // empty: the upload URL with "simple/" in place of a trailing "legacy/" (pypiserver, devpi's
  // root, Warehouse's path layout).
  std::string index_url;
  bool allow_local_versions = false;  // "+label" versions (PyPI refuses them)
  // Send each file's PEP 740 attestation (registry/attestation.h); a file without a valid one
  // is not uploaded.
  bool attestations = false;
  // Where else an attestation is looked for (registry/attestation.h): --delivered-dir and the
  // inputs' folders, for labelled copies made in a temporary folder.
  std::vector<std::filesystem::path> attestation_dirs;
  net::HttpOptions http;
  net::RetryPolicy retry;
};

enum class PublishOutcome { uploaded, already_there, failed };

struct PublishResult {
  std::filesystem::path file;
  PublishOutcome outcome = PublishOutcome::failed;
  std::string message;
};

// The simple index URL of `request` (index_url, or derived from the upload URL as above).
std::string simple_index_url(const PublishRequest& request);

// The sha256 (hex) a simple index page (HTML or PEP 691 JSON) lists for `file`, or "".
std::string listed_sha256(const std::string& page, const std::string& content_type,
                          const std::string& file);

// The form fields for one wheel, from its file name and METADATA (what twine sends), and its
// attestation in the `attestations` field when `with_attestation` is set.
Expected<std::vector<net::FormPart>> upload_form(
    const std::filesystem::path& wheel, bool with_attestation = false,
    const std::vector<std::filesystem::path>& attestation_dirs = {});

std::vector<PublishResult> publish_wheels(const PublishRequest& request,
                                          const std::vector<std::filesystem::path>& wheels,
                                          const std::function<void(const std::string&)>& log);

}  // namespace sagebuild::registry
