#include "github/simple_index.h"

#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "matrix/version.h"
#include "util/fs.h"
#include "util/sha256.h"
#include "wheel/dist_info.h"
#include "wheel/filename.h"
#include "wheel/naming.h"
#include "wheel/provenance.h"
#include "wheel/zip_archive.h"

namespace sagebuild::github {
namespace {

namespace stdfs = std::filesystem;

std::string html_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string variant_of(const wheel::Provenance& p) {
  const auto torch = Version::parse(p.torch);
  const auto cuda = Version::parse(p.cuda);
  if (!torch || !cuda) return "";
  return fmt::format("{}torch{}.{}-cu{}{}", p.abi == "stable" ? "stable-" : "", torch->major(),
                     torch->minor(), cuda->major(), cuda->minor());
}

Expected<Ok> write(const stdfs::path& path, const std::string& text) {
  std::error_code ec;
  stdfs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) return Error{fmt::format("cannot write {}", path.string())};
  return Ok{};
}

// One simple index (root + project pages) under `simple_dir`, linking to wheels via `to_wheels`
// (the relative path from a project page to site/wheels/).
Expected<Ok> write_simple(const std::vector<const IndexedWheel*>& wheels,
                          const stdfs::path& simple_dir, const std::string& to_wheels) {
  std::map<std::string, std::vector<const IndexedWheel*>> by_project;
  for (const IndexedWheel* w : wheels)
    by_project[w->project].push_back(w);
  std::string root =
      "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\">"
      "<title>Simple index</title></head><body>\n";
  nlohmann::ordered_json root_json = {{"meta", {{"api-version", "1.1"}}},
                                      {"projects", nlohmann::ordered_json::array()}};
  for (const auto& [project, files] : by_project) {
    root += fmt::format("<a href=\"{0}/\">{0}</a>\n", html_escape(project));
    root_json["projects"].push_back({{"name", project}});
    std::string page = fmt::format(
        "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\">"
        "<title>Links for {0}</title></head><body><h1>Links for {0}</h1>\n",
        html_escape(project));
    nlohmann::ordered_json files_json = nlohmann::ordered_json::array();
    std::set<std::string> versions;
    for (const IndexedWheel* w : files) {
      const std::string name = w->path.filename().string();
      const std::string url = to_wheels + name;
      page += fmt::format("<a href=\"{}#sha256={}\"{}>{}</a><br>\n", html_escape(url), w->sha256,
                          w->requires_python.empty() ? ""
                                                     : fmt::format(" data-requires-python=\"{}\"",
                                                                   html_escape(w->requires_python)),
                          html_escape(name));
      nlohmann::ordered_json file = {
          {"filename", name}, {"url", url}, {"hashes", {{"sha256", w->sha256}}}, {"size", w->size}};
      if (!w->requires_python.empty()) file["requires-python"] = w->requires_python;
      files_json.push_back(file);
      versions.insert(w->version);
    }
    page += "</body></html>\n";
    const nlohmann::ordered_json project_json = {{"meta", {{"api-version", "1.1"}}},
                                                 {"name", project},
                                                 {"files", files_json},
                                                 {"versions", versions}};
    if (auto r = write(simple_dir / project / "index.html", page); !r) return r;
    if (auto r = write(simple_dir / project / "index.json", project_json.dump(1) + "\n"); !r)
      return r;
  }
  root += "</body></html>\n";
  if (auto r = write(simple_dir / "index.html", root); !r) return r;
  return write(simple_dir / "index.json", root_json.dump(1) + "\n");
}

}  // namespace

std::vector<const IndexedWheel*> cuda_index_wheels(const std::vector<IndexedWheel>& wheels,
                                                   int cuda_major) {
  // The oldest torch a universal wheel of this major serves: older torch gets per-torch wheels.
  std::optional<Version> from;
  for (const IndexedWheel& w : wheels) {
    if (w.stable_abi && w.cuda.major() == cuda_major && (!from || w.torch < *from)) from = w.torch;
  }
  std::vector<const IndexedWheel*> out;
  for (const IndexedWheel& w : wheels) {
    if (w.cuda.major() != cuda_major) continue;
    if (w.stable_abi || !from || w.torch < *from) out.push_back(&w);
  }
  return out;
}

Expected<IndexedWheel> describe_wheel(const stdfs::path& path) {
  auto name = wheel::parse_wheel_filename(path.filename().string());
  if (!name) return name.error();
  auto archive = wheel::ZipArchive::open(path);
  if (!archive) return archive.error();
  IndexedWheel w;
  w.path = path;
  w.project = name->canonical_name;
  w.version = name->version.normalized;
  const std::string dist_info =
      wheel::escape_distribution_name(name->name_part) + "-" + name->version_text + ".dist-info/";
  auto stream = archive->open_stream();
  std::vector<std::uint8_t> data, scratch;
  for (const auto& e : archive->entries()) {
    if (e.name == dist_info + std::string(wheel::kProvenanceFile)) {
      if (auto error = archive->read(stream, e, data, scratch)) return Error{error->message};
      auto p = wheel::Provenance::parse(std::string(data.begin(), data.end()));
      if (!p) return p.error();
      w.variant = variant_of(*p);
      w.stable_abi = p->abi == "stable";
      if (auto v = Version::parse(p->torch)) w.torch = *v;
      if (auto v = Version::parse(p->cuda)) w.cuda = *v;
    } else if (e.name == dist_info + "METADATA") {
      if (auto error = archive->read(stream, e, data, scratch)) return Error{error->message};
      auto h = wheel::Headers::parse(std::string(data.begin(), data.end()));
      if (h) w.requires_python = h->first("Requires-Python").value_or("");
    }
  }
  if (w.variant.empty()) {
    return Error{fmt::format("{} records no torch/CUDA provenance (build it with sagebuild build)",
                             path.filename().string())};
  }
  auto digest = sha256_file(path);
  if (!digest) return digest.error();
  w.sha256 = to_hex(digest->digest);
  w.size = digest->size;
  return w;
}

Expected<IndexSummary> write_index(const std::vector<IndexedWheel>& wheels,
                                   const stdfs::path& site) {
  const stdfs::path temp = site.parent_path() / ("." + site.filename().string() + ".partial");
  std::error_code ec;
  stdfs::remove_all(temp, ec);
  stdfs::create_directories(temp / "wheels", ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", temp.string(), ec.message())};
  IndexSummary summary;
  std::map<std::string, std::vector<const IndexedWheel*>> by_variant;
  std::vector<const IndexedWheel*> all;
  for (const IndexedWheel& w : wheels) {
    stdfs::copy_file(w.path, temp / "wheels" / w.path.filename(),
                     stdfs::copy_options::overwrite_existing, ec);
    if (ec) return Error{fmt::format("cannot copy {}: {}", w.path.string(), ec.message())};
    by_variant[w.variant].push_back(&w);
    all.push_back(&w);
  }
  for (const auto& [variant, list] : by_variant) {
    if (auto r = write_simple(list, temp / variant / "simple", "../../../wheels/"); !r)
      return r.error();
    summary.variants.push_back(variant);
  }
  std::set<int> majors;
  for (const IndexedWheel& w : wheels)
    majors.insert(w.cuda.major());
  for (const int major : majors) {
    const std::string name = fmt::format("cu{}", major);
    if (auto r = write_simple(cuda_index_wheels(wheels, major), temp / name / "simple",
                              "../../../wheels/");
        !r) {
      return r.error();
    }
    summary.cuda_indexes.push_back(name);
  }
  if (auto r = write_simple(all, temp / "simple", "../../wheels/"); !r) return r.error();
  summary.wheels = wheels.size();
  // Replace the previous site only now that the new one is complete.
  const stdfs::path old = site.parent_path() / ("." + site.filename().string() + ".old");
  stdfs::remove_all(old, ec);
  if (stdfs::exists(site)) stdfs::rename(site, old, ec);
  stdfs::rename(temp, site, ec);
  if (ec)
    return Error{fmt::format("cannot move the index into {}: {}", site.string(), ec.message())};
  stdfs::remove_all(old, ec);
  return summary;
}

}  // namespace sagebuild::github
