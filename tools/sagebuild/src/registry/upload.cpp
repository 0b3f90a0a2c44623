#include "registry/upload.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "registry/attestation.h"
#include "util/json_text.h"
#include "util/secrets.h"
#include "util/sha256.h"
#include "util/text.h"
#include "wheel/dist_info.h"
#include "wheel/filename.h"

namespace sagebuild::registry {
namespace {

// METADATA header -> upload field, as twine maps them; the multi-valued ones repeat.
struct FieldMap {
  const char* header;
  const char* field;
};
constexpr FieldMap kFields[] = {
    {"Metadata-Version", "metadata_version"},
    {"Summary", "summary"},
    {"Home-page", "home_page"},
    {"Author", "author"},
    {"Author-email", "author_email"},
    {"Maintainer", "maintainer"},
    {"Maintainer-email", "maintainer_email"},
    {"License", "license"},
    {"License-Expression", "license_expression"},
    {"Keywords", "keywords"},
    {"Requires-Python", "requires_python"},
    {"Description-Content-Type", "description_content_type"},
    {"Classifier", "classifiers"},
    {"Requires-Dist", "requires_dist"},
    {"Provides-Extra", "provides_extra"},
    {"Project-URL", "project_urls"},
    {"Platform", "platform"},
};

// "Already there" as the registries say it: 409 (pypiserver, devpi), 400 with "already
// exists" (Warehouse), 403 with it (some GitHub Packages answers).
bool says_already_there(const net::HttpResponse& r) {
  const std::string body = text::ascii_lower(r.body);
  return r.status == 409 || ((r.status == 400 || r.status == 403) &&
                             (body.find("already exist") != std::string::npos ||
                              body.find("file exists") != std::string::npos));
}

// What a registry's error body says, in one short line: the <title> of an HTML page (or its
// text without tags), the "message"/"detail" of a JSON answer is left to the text, control
// characters dropped, at most 160 characters.
std::string one_line_reason(const net::HttpResponse& r) {
  std::string text = r.body;
  const std::string lower = text::ascii_lower(text);
  if (lower.find("<html") != std::string::npos || lower.find("<!doctype") != std::string::npos ||
      lower.find("<title") != std::string::npos) {
    if (const auto open = lower.find("<title"); open != std::string::npos) {
      const auto start = lower.find('>', open);
      const auto end = lower.find("</title", start);
      text = start == std::string::npos || end == std::string::npos
                 ? ""
                 : text.substr(start + 1, end - start - 1);
    } else {
      std::string stripped;
      bool in_tag = false;
      for (const char c : text) {
        if (c == '<') in_tag = true;
        if (!in_tag) stripped += c;
        if (c == '>') in_tag = false, stripped += ' ';
      }
      text = stripped;
    }
  }
  std::string line;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool space = u < 0x20 || u == 0x7f || c == ' ';
    if (space) {
      if (!line.empty() && line.back() != ' ') line += ' ';
    } else {
      line += c;
    }
  }
  line = std::string(text::trim(line));
  if (line.size() > 160) line = line.substr(0, 157) + "...";
  return line;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto hex = [](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The file a registry has under `file`: the same bytes (skipped), different ones or ones whose
// digest cannot be read (errors; nothing is replaced).
PublishResult compare_with_registry(const PublishRequest& request,
                                    const std::filesystem::path& path, const std::string& project) {
  const std::string file = path.filename().string();
  PublishResult out{path, PublishOutcome::failed, ""};
  auto digest = sha256_file(path);
  if (!digest) {
    out.message = digest.error().message;
    return out;
  }
  const std::string ours = to_hex(digest->digest);
  const std::string index = simple_index_url(request);
  net::HttpRequest get;
  get.url = index + project + "/";
  get.headers = {"Accept: application/vnd.pypi.simple.v1+json, text/html;q=0.5"};
  get.username = request.username;
  get.password = request.password;
  get.use_netrc = true;
  auto page = net::perform_with_retries(get, request.http, request.retry);
  const std::string theirs = page && page->status == 200
                                 ? listed_sha256(page->body, page->header("content-type"), file)
                                 : "";
  if (theirs.empty()) {
    out.message = fmt::format(
        "the registry has a file of this name, but {} lists no sha256 for it ({}); not "
        "confirmed as the same file (pass --index-url where the registry lists its files)",
        get.url, page ? fmt::format("HTTP {}", page->status) : page.error().message);
  } else if (theirs != ours) {
    out.message = fmt::format(
        "a different file of this name is on the registry (sha256 {}; this one {}); registries "
        "never replace a file: publish it under a new version or build tag",
        theirs, ours);
  } else {
    out.outcome = PublishOutcome::already_there;
    out.message = "already there (same sha256), skipped";
  }
  return out;
}

}  // namespace

std::string simple_index_url(const PublishRequest& request) {
  std::string url = request.index_url.empty() ? request.repository_url : request.index_url;
  if (!url.ends_with('/')) url += '/';
  if (!request.index_url.empty()) return url;
  if (url.ends_with("/legacy/")) url.resize(url.size() - 7);
  return url + "simple/";
}

std::string listed_sha256(const std::string& page, const std::string& content_type,
                          const std::string& file) {
  if (content_type.find("json") != std::string::npos) {
    const auto doc = parse_json_bounded(page);
    if (!doc.is_object() || !doc.contains("files") || !doc["files"].is_array()) return "";
    for (const auto& f : doc["files"]) {
      if (json_get<std::string>(f, "filename") != file) continue;
      if (f.contains("hashes") && f["hashes"].is_object() && f["hashes"].contains("sha256") &&
          f["hashes"]["sha256"].is_string())
        return text::ascii_lower(f["hashes"]["sha256"].get<std::string>());
    }
    return "";
  }
  // HTML: <a href=".../name.whl#sha256=hex">; the link's last path segment, percent-decoded.
  for (std::size_t at = page.find("href="); at != std::string::npos;
       at = page.find("href=", at + 5)) {
    const char quote = at + 5 < page.size() ? page[at + 5] : '\0';
    if (quote != '"' && quote != '\'') continue;
    const auto end = page.find(quote, at + 6);
    if (end == std::string::npos) break;
    const std::string href = page.substr(at + 6, end - at - 6);
    const auto hash = href.find('#');
    std::string target = href.substr(0, hash);
    if (const auto query = target.find('?'); query != std::string::npos) target.resize(query);
    if (percent_decode(target.substr(target.rfind('/') + 1)) != file) continue;
    if (hash == std::string::npos) return "";
    const std::string fragment = href.substr(hash + 1);
    return fragment.starts_with("sha256=") ? text::ascii_lower(fragment.substr(7)) : "";
  }
  return "";
}

Expected<std::vector<net::FormPart>> upload_form(
    const std::filesystem::path& wheel, bool with_attestation,
    const std::vector<std::filesystem::path>& attestation_dirs) {
  auto name = wheel::parse_wheel_filename(wheel.filename().string());
  if (!name) return name.error();
  auto metadata_text = wheel::read_dist_info_member(wheel, "METADATA");
  if (!metadata_text) return metadata_text.error();
  auto metadata = wheel::Headers::parse(*metadata_text);
  if (!metadata) return metadata.error();
  auto digest = sha256_file(wheel);
  if (!digest) return digest.error();

  std::vector<net::FormPart> form = {
      {":action", "file_upload", {}, {}, {}},
      {"protocol_version", "1", {}, {}, {}},
      {"name", metadata->first("Name").value_or(name->name_part), {}, {}, {}},
      {"version", metadata->first("Version").value_or(name->version_text), {}, {}, {}},
      {"filetype", "bdist_wheel", {}, {}, {}},
      {"pyversion", text::split(name->tag_text, '-').front(), {}, {}, {}},
      {"sha256_digest", to_hex(digest->digest), {}, {}, {}},
  };
  for (const FieldMap& f : kFields) {
    for (const std::string& value : metadata->all(f.header))
      form.push_back({f.field, value, {}, {}, {}});
  }
  // The long description is METADATA's body (after the headers), when there is one.
  if (const auto blank = metadata_text->find("\n\n"); blank != std::string::npos) {
    const std::string body = metadata_text->substr(blank + 2);
    if (!text::trim(body).empty()) form.push_back({"description", body, {}, {}, {}});
  }
  if (with_attestation) {
    auto attestations = attestations_field(wheel, to_hex(digest->digest), attestation_dirs);
    if (!attestations) return attestations.error();
    form.push_back({"attestations", std::move(*attestations), {}, {}, {}});
  }
  form.push_back({"content", "", wheel, wheel.filename().string(), "application/octet-stream"});
  return form;
}

std::vector<PublishResult> publish_wheels(const PublishRequest& request,
                                          const std::vector<std::filesystem::path>& wheels,
                                          const std::function<void(const std::string&)>& log) {
  std::vector<PublishResult> results;
  // The credentials in every spelling a message could carry them (a server may echo the
  // request's Authorization header, a URL may hold user:token).
  std::vector<std::string> secrets = credential_forms(request.username, request.password);
  const auto [url_user, url_password] = url_credentials(request.repository_url);
  for (std::string& form : credential_forms(url_user, url_password))
    secrets.push_back(std::move(form));
  // Credentials the registry refused for one file are refused for the next: the rest are not
  // sent (five uploads, five 401s, said nothing the first did not).
  std::string refused_credentials;
  for (const auto& path : wheels) {
    PublishResult out{path, PublishOutcome::failed, ""};
    if (request.http.cancelled && request.http.cancelled()) {
      out.message = std::string("not started: ") + net::kInterrupted;
      results.push_back(std::move(out));
      continue;
    }
    if (!refused_credentials.empty()) {
      out.message =
          fmt::format("not sent: the registry refused the credentials for {}", refused_credentials);
      log(fmt::format("  {}: {}", path.filename().string(), out.message));
      results.push_back(std::move(out));
      continue;
    }
    const std::string file = path.filename().string();
    auto name = wheel::parse_wheel_filename(file);
    const bool refused_local = name && name->version.has_local && !request.allow_local_versions;
    auto form = name && !refused_local
                    ? upload_form(path, request.attestations, request.attestation_dirs)
                    : Expected<std::vector<net::FormPart>>(Error{});
    if (!name) {
      out.message = name.error().message;
    } else if (refused_local) {
      out.message = fmt::format(
          "version {} has a local label, which PyPI refuses; pass --allow-local-versions for a "
          "registry that accepts them",
          name->version.normalized);
    } else if (!form) {
      out.message = form.error().message;
    } else {
      net::HttpRequest http;
      http.method = "POST";
      http.url = request.repository_url;
      http.form = std::move(*form);
      http.username = request.username;
      http.password = request.password;
      http.use_netrc = true;
      http.follow_redirects = false;  // a redirected upload is re-sent as a GET: nothing uploaded
      auto r = net::perform_with_retries(http, request.http, request.retry);
      if (!r) {
        out.message = r.error().message;
      } else if (r->status >= 300 && r->status < 400) {
        const std::string location = r->header("location");
        out.message = fmt::format(
            "HTTP {}: the registry redirected the upload{}; not followed, nothing uploaded (give "
            "the upload URL itself with --repository-url)",
            r->status, location.empty() ? "" : " to " + redact_url(location));
      } else if (r->status >= 200 && r->status < 300) {
        out.outcome = PublishOutcome::uploaded;
        out.message = "uploaded";
      } else if (says_already_there(*r)) {
        out = compare_with_registry(request, path, name->canonical_name);
      } else {
        std::string advice;
        if (r->status == 401 || r->status == 403) {
          refused_credentials = fmt::format("{} (HTTP {})", file, r->status);
          advice =
              "; check the credentials (SAGEBUILD_PUBLISH_USERNAME/PASSWORD, "
              "TWINE_USERNAME/PASSWORD or ~/.netrc)";
        }
        const std::string reason = one_line_reason(*r);
        out.message =
            fmt::format("HTTP {}{}{}", r->status, reason.empty() ? "" : ": " + reason, advice);
      }
    }
    out.message = redact(out.message, secrets);
    log(fmt::format("  {}: {}", file, out.message));
    results.push_back(std::move(out));
  }
  return results;
}

}  // namespace sagebuild::registry
