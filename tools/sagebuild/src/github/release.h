// `sagebuild release`: uploads wheels as assets of the GitHub release of a tag, through the
// GitHub REST API (net/http.h on libcurl). Idempotent: an asset already there with the same
// content is skipped; a different one is refused unless clobber; a half-finished upload left by
// an earlier failure (state "starter") is removed and uploaded again. Safe to re-run after any
// failure.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "net/http.h"
#include "net/retry.h"
#include "util/expected.h"

namespace sagebuild::github {

struct ReleaseRequest {
  std::string api_url;  // GITHUB_API_URL, e.g. https://api.github.com or GHES's /api/v3
  std::string repo;     // owner/name
  std::string token;    // never printed, logged or put into a message
  std::string tag;
  std::string title;  // release name; the tag when empty
  std::string notes;  // release body, for a release this creates
  bool draft = false;
  bool clobber = false;
  net::HttpOptions http;
  net::RetryPolicy retry;
};

enum class AssetOutcome { uploaded, unchanged, replaced, failed };

struct AssetResult {
  std::filesystem::path file;
  AssetOutcome outcome = AssetOutcome::failed;
  std::string message;  // why it failed, or what happened
};

struct ReleaseResult {
  std::string html_url;
  bool created = false;
  std::vector<AssetResult> assets;
  bool ok() const;
};

// Errors are for the release itself (cannot find or create it); per-asset failures are in the
// result. `log` receives progress lines.
Expected<ReleaseResult> upload_release_assets(const ReleaseRequest& request,
                                              const std::vector<std::filesystem::path>& files,
                                              const std::function<void(const std::string&)>& log);

// The URL of rel="next" in a Link header, or "".
std::string next_page_url(std::string_view link_header);

}  // namespace sagebuild::github
