#include "github/release.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/json_text.h"
#include "util/secrets.h"
#include "util/sha256.h"
#include "util/text.h"

namespace sagebuild::github {
namespace {

using nlohmann::json;

struct LocalFile {
  std::filesystem::path path;
  std::string name;
  std::string sha256;  // hex
  std::uint64_t size = 0;
};

// Where the token may go: the API's origin, and its upload host (api.github.com uploads to
// uploads.github.com; GitHub Enterprise Server to /api/uploads on its own host). Never to a host
// a server's answer names (a Link header, an upload_url).
std::vector<std::string> token_origins(const std::string& api_url) {
  std::vector<std::string> origins;
  const std::string api = net::url_origin(api_url);
  if (api.empty()) return origins;
  origins.push_back(api);
  const std::size_t host = api.find("://") + 3;
  if (api.compare(host, 4, "api.") == 0) {
    origins.push_back(api.substr(0, host) + "uploads." + api.substr(host + 4));
  }
  return origins;
}

class Api {
 public:
  explicit Api(const ReleaseRequest& r) : r_(r), origins_(token_origins(r.api_url)) {}

  std::string repo_url(const std::string& path) const {
    std::string base = r_.api_url;
    while (base.ends_with('/'))
      base.pop_back();
    return fmt::format("{}/repos/{}{}", base, r_.repo, path);
  }

  Expected<net::HttpResponse> call(const std::string& method, const std::string& url,
                                   const std::string& body = {},
                                   const std::filesystem::path& file = {}) const {
    const std::string origin = net::url_origin(url);
    if (std::find(origins_.begin(), origins_.end(), origin) == origins_.end()) {
      return Error{
          fmt::format("the server pointed at {}, which is not the API ({}) or its upload "
                      "host: the token is not sent there",
                      origin.empty() ? url : origin, net::url_origin(r_.api_url))};
    }
    net::HttpRequest req;
    req.follow_redirects = file.empty();  // an upload is never re-sent elsewhere
    req.method = method;
    req.url = url;
    req.headers = {"Accept: application/vnd.github+json", "X-GitHub-Api-Version: 2022-11-28",
                   "Authorization: Bearer " + r_.token};
    if (!body.empty()) req.headers.push_back("Content-Type: application/json");
    if (!file.empty()) req.headers.push_back("Content-Type: application/octet-stream");
    req.body = body;
    req.body_file = file;
    auto response = net::perform_with_retries(req, r_.http, r_.retry);
    if (!response)
      return Error{redact(response.error().message, {r_.token}), response.error().kind};
    return response;
  }

  // A message for a failed call that a user can act on; never contains the token.
  std::string failure(const std::string& what, const net::HttpResponse& r) const {
    std::string detail;
    const json doc = parse_json_bounded(r.body);
    if (doc.is_object() && doc.contains("message") && doc["message"].is_string()) {
      detail = doc["message"].get<std::string>();
      if (doc.contains("errors") && doc["errors"].is_array()) {
        for (const json& e : doc["errors"]) {
          if (e.is_object() && e.contains("code") && e["code"].is_string())
            detail += " (" + e["code"].get<std::string>() + ")";
        }
      }
    }
    std::string advice;
    if (net::is_rate_limited(r)) {
      advice = "rate limited by GitHub for longer than --retry-max-wait; run again " +
               net::rate_limit_reset_time(r);
    } else if (r.status == 401) {
      advice = "the token was rejected; set GITHUB_TOKEN (or GH_TOKEN) to a valid token";
    } else if (r.status == 403) {
      advice = fmt::format("the token may not write to {}: it needs 'contents: write'", r_.repo);
    } else if (r.status == 404) {
      advice = fmt::format(
          "no such repository {}, or the token cannot see it (check --repo and the token)",
          r_.repo);
    }
    return redact(fmt::format("{}: HTTP {}{}{}", what, r.status, detail.empty() ? "" : " " + detail,
                              advice.empty() ? "" : "; " + advice),
                  {r_.token});
  }

 private:
  const ReleaseRequest& r_;
  std::vector<std::string> origins_;
};

Expected<json> parse_object(const net::HttpResponse& r, const std::string& what) {
  json doc = parse_json_bounded(r.body);
  if (!doc.is_object())
    return Error{fmt::format("{}: the server's answer is not a JSON object", what)};
  return doc;
}

// A listing's bounds: GitHub holds at most 1000 assets on a release and pages of up to 100.
constexpr int kMaxPages = 100;
constexpr std::size_t kMaxItems = 10'000;

// GETs `url` and every rel="next" page after it, handing each JSON array item to `visit`, which
// returns true to stop early.
Expected<Ok> for_each_item(const Api& api, std::string url, const std::string& what,
                           const std::function<bool(const json&)>& visit) {
  std::size_t items = 0;
  for (int page = 0; !url.empty(); ++page) {
    if (page >= kMaxPages) {
      return Error{fmt::format("{}: more than {} pages (the bound of a listing)", what, kMaxPages)};
    }
    auto r = api.call("GET", url);
    if (!r) return r.error();
    if (r->status != 200) return Error{api.failure(what, *r)};
    const json doc = parse_json_bounded(r->body);
    if (!doc.is_array()) return Error{what + ": the answer is not a JSON array"};
    items += doc.size();
    if (items > kMaxItems) {
      return Error{fmt::format("{}: more than {} items (the bound of a listing)", what, kMaxItems)};
    }
    for (const json& item : doc) {
      if (item.is_object() && visit(item)) return Ok{};
    }
    url = next_page_url(r->header("link"));
  }
  return Ok{};
}

// Every asset of the release, by name.
Expected<std::map<std::string, json>> list_assets(const Api& api, std::int64_t release_id) {
  std::map<std::string, json> assets;
  auto listed =
      for_each_item(api, api.repo_url(fmt::format("/releases/{}/assets?per_page=100", release_id)),
                    "listing release assets", [&](const json& a) {
                      // What is compared and acted on, not the whole answer (uploader
                      // objects, URLs): a hostile page keeps no more than this.
                      const auto name = json_get<std::string>(a, "name");
                      if (!name) return false;
                      json slim = json::object();
                      for (const char* key : {"id", "size", "digest", "state"}) {
                        if (a.contains(key) && !a[key].is_structured()) slim[key] = a[key];
                      }
                      assets[*name] = std::move(slim);
                      return false;
                    });
  if (!listed) return listed.error();
  return assets;
}

// The release of the tag: published ones by the tags endpoint, drafts (which that endpoint does
// not return) from the paginated list; else created.
Expected<json> find_or_create_release(const Api& api, const ReleaseRequest& request,
                                      bool* created) {
  auto r = api.call("GET", api.repo_url("/releases/tags/" + text::percent_encode(request.tag)));
  if (!r) return r.error();
  if (r->status == 200) return parse_object(*r, "reading the release");
  if (r->status != 404) return Error{api.failure("reading the release of " + request.tag, *r)};
  std::optional<json> draft;
  auto listed = for_each_item(api, api.repo_url("/releases?per_page=100"), "listing releases",
                              [&](const json& rel) {
                                if (json_get<std::string>(rel, "tag_name") != request.tag)
                                  return false;
                                draft = rel;
                                return true;
                              });
  if (!listed) return listed.error();
  if (draft) return *draft;
  const json body = {{"tag_name", request.tag},
                     {"name", request.title.empty() ? request.tag : request.title},
                     {"body", request.notes},
                     {"draft", request.draft}};
  auto made = api.call("POST", api.repo_url("/releases"), json_text(body));
  if (!made) return made.error();
  if (made->status == 422) {
    // Made meanwhile by another job of the same workflow: use that one.
    auto again =
        api.call("GET", api.repo_url("/releases/tags/" + text::percent_encode(request.tag)));
    if (again && again->status == 200) return parse_object(*again, "reading the release");
  }
  if (made->status != 201) return Error{api.failure("creating the release " + request.tag, *made)};
  *created = true;
  return parse_object(*made, "creating the release");
}

// GitHub marks an upload that never finished with state "starter".
bool is_complete(const json& asset) {
  return json_or<std::string>(asset, "state", "uploaded") == "uploaded";
}

bool same_content(const json& asset, const LocalFile& f) {
  if (json_get<std::uint64_t>(asset, "size") != f.size) return false;
  // Assets carry "digest": "sha256:<hex>" (since 2025). Without one the content is unknown, and
  // an asset of the same size is not taken for the same file (it is replaced with --clobber).
  return json_get<std::string>(asset, "digest") == "sha256:" + f.sha256;
}

}  // namespace

bool ReleaseResult::ok() const {
  for (const auto& a : assets) {
    if (a.outcome == AssetOutcome::failed) return false;
  }
  return true;
}

std::string next_page_url(std::string_view link) {
  // <https://api.github.com/...&page=2>; rel="next", <...>; rel="last"
  for (const std::string& part : text::split(link, ',')) {
    const auto open = part.find('<');
    const auto close = part.find('>');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    if (part.find("rel=\"next\"", close) != std::string::npos)
      return part.substr(open + 1, close - open - 1);
  }
  return {};
}

Expected<ReleaseResult> upload_release_assets(const ReleaseRequest& request,
                                              const std::vector<std::filesystem::path>& files,
                                              const std::function<void(const std::string&)>& log) {
  std::vector<LocalFile> local;
  std::map<std::string, std::filesystem::path> by_name;
  for (const auto& path : files) {
    auto digest = sha256_file(path);
    if (!digest) return digest.error();
    LocalFile f{path, path.filename().string(), to_hex(digest->digest), digest->size};
    if (auto [at, inserted] = by_name.emplace(f.name, path); !inserted) {
      return Error{fmt::format("{} and {} have the same name; a release holds one asset per name",
                               at->second.string(), path.string())};
    }
    local.push_back(std::move(f));
  }

  const Api api(request);
  ReleaseResult result;
  auto release = find_or_create_release(api, request, &result.created);
  if (!release) return release.error();
  result.html_url = json_or<std::string>(*release, "html_url", "");
  const std::int64_t id = json_or<std::int64_t>(*release, "id", 0);
  std::string upload_url = json_or<std::string>(*release, "upload_url", "");
  if (const auto brace = upload_url.find('{'); brace != std::string::npos)
    upload_url.resize(brace);  // ".../assets{?name,label}" is a URI template
  if (id == 0 || upload_url.empty()) return Error{"the release has no id or upload_url"};
  log(fmt::format("release {} ({}): {}", request.tag, result.created ? "created" : "exists",
                  result.html_url));

  auto assets = list_assets(api, id);
  if (!assets) return assets.error();
  auto remove = [&](const json& asset) -> std::optional<std::string> {
    auto r = api.call("DELETE", api.repo_url(fmt::format("/releases/assets/{}",
                                                         json_or<std::int64_t>(asset, "id", 0))));
    if (!r) return r.error().message;
    if (r->status != 204 && r->status != 404) return api.failure("deleting the old asset", *r);
    return std::nullopt;
  };

  for (const LocalFile& f : local) {
    AssetResult out{f.path, AssetOutcome::failed, ""};
    if (request.http.cancelled && request.http.cancelled()) {
      out.message = std::string("not started: ") + net::kInterrupted;
      result.assets.push_back(std::move(out));
      continue;
    }
    bool replacing = false;
    if (auto existing = assets->find(f.name); existing != assets->end()) {
      const json& asset = existing->second;
      const bool complete = is_complete(asset);
      if (complete && same_content(asset, f)) {
        out.outcome = AssetOutcome::unchanged;
        out.message = "already there with the same content";
        log(fmt::format("  {}: {}", f.name, out.message));
        result.assets.push_back(std::move(out));
        continue;
      }
      if (complete && !request.clobber) {
        const auto digest = json_get<std::string>(asset, "digest");
        out.message = fmt::format(
            "a different {} is already on the release ({} bytes{}, here {} bytes, sha256 {}); "
            "pass --clobber to replace it",
            f.name, json_or<std::uint64_t>(asset, "size", 0), digest ? ", " + *digest : "", f.size,
            f.sha256);
        log(fmt::format("  {}: refused: {}", f.name, out.message));
        result.assets.push_back(std::move(out));
        continue;
      }
      // Replaced on --clobber; an incomplete upload of an earlier run is always replaced.
      if (auto failed = remove(asset)) {
        out.message = *failed;
        result.assets.push_back(std::move(out));
        continue;
      }
      replacing = complete;
    }

    const std::string url = upload_url + "?name=" + text::percent_encode(f.name);
    auto r = api.call("POST", url, {}, f.path);
    bool uploaded = r && r->status == 201;
    if (r && r->status == 422) {
      // An earlier attempt of this call may have stored it before the connection dropped: keep
      // it when it is this file, else remove the leftover and upload once more.
      auto now = list_assets(api, id);
      const auto stored = now ? now->find(f.name) : std::map<std::string, json>::iterator();
      if (now && stored != now->end()) {
        if (is_complete(stored->second) && same_content(stored->second, f)) {
          uploaded = true;
        } else if (!remove(stored->second)) {
          r = api.call("POST", url, {}, f.path);
          uploaded = r && r->status == 201;
        }
      }
    }
    if (uploaded) {
      out.outcome = replacing ? AssetOutcome::replaced : AssetOutcome::uploaded;
      out.message = fmt::format("{} ({} bytes)", replacing ? "replaced" : "uploaded", f.size);
    } else {
      out.message = r ? api.failure("uploading " + f.name, *r) : r.error().message;
    }
    log(fmt::format("  {}: {}", f.name, out.message));
    result.assets.push_back(std::move(out));
  }
  return result;
}

}  // namespace sagebuild::github
