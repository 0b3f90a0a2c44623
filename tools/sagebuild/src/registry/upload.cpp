#include "registry/upload.h"

#include <fmt/format.h>

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

}  // namespace

Expected<std::vector<net::FormPart>> upload_form(const std::filesystem::path& wheel) {
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
  for (const auto& path : wheels) {
    PublishResult out{path, PublishOutcome::failed, ""};
    const std::string file = path.filename().string();
    auto name = wheel::parse_wheel_filename(file);
    const bool refused_local = name && name->version.has_local && !request.allow_local_versions;
    auto form =
        name && !refused_local ? upload_form(path) : Expected<std::vector<net::FormPart>>(Error{});
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
      auto r = net::perform_with_retries(http, request.http, request.retry);
      if (!r) {
        out.message = r.error().message;
      } else if (r->status >= 200 && r->status < 300) {
        out.outcome = PublishOutcome::uploaded;
        out.message = "uploaded";
      } else if (says_already_there(*r)) {
        out.outcome = PublishOutcome::already_there;
        out.message = "already there, skipped";
      } else {
        std::string advice;
        if (r->status == 401 || r->status == 403) {
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
