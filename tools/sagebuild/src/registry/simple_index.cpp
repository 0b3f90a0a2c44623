#include "registry/simple_index.h"

#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "registry/wheel_variants.h"
#include "util/fs.h"
#include "util/json_text.h"
#include "util/sha256.h"
#include "util/version.h"
#include "wheel/dist_info.h"
#include "wheel/filename.h"
#include "wheel/naming.h"
#include "wheel/provenance.h"
#include "wheel/repack.h"
#include "wheel/zip_archive.h"

namespace sagebuild::registry {
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

// A file's link relative to the page that names it: '+' of a local version percent-encoded, as
// PyTorch's indexes write it.
std::string file_url(const std::string& prefix, const std::string& name) {
  std::string url = prefix;
  for (const char c : name)
    url += c == '+' ? std::string("%2B") : std::string(1, c);
  return url;
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
                          const stdfs::path& simple_dir, const std::string& to_wheels,
                          const std::vector<LinkedFile>& others = {}) {
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
      const std::string url = file_url(to_wheels, name);
      const std::string metadata_attr =
          fmt::format(" data-core-metadata=\"sha256={0}\" data-dist-info-metadata=\"sha256={0}\"",
                      to_hex(sha256({reinterpret_cast<const std::uint8_t*>(w->metadata.data()),
                                     w->metadata.size()})));
      page += fmt::format("<a href=\"{}#sha256={}\"{}{}>{}</a><br>\n", html_escape(url), w->sha256,
                          w->requires_python.empty() ? ""
                                                     : fmt::format(" data-requires-python=\"{}\"",
                                                                   html_escape(w->requires_python)),
                          metadata_attr, html_escape(name));
      nlohmann::ordered_json file = {
          {"filename", name}, {"url", url}, {"hashes", {{"sha256", w->sha256}}}, {"size", w->size}};
      // PEP 658/714: the metadata apart, so that pip resolves without downloading the wheel.
      const std::string metadata_sha256 = to_hex(
          sha256({reinterpret_cast<const std::uint8_t*>(w->metadata.data()), w->metadata.size()}));
      file["core-metadata"] = {{"sha256", metadata_sha256}};
      file["data-dist-info-metadata"] = {{"sha256", metadata_sha256}};
      if (!w->requires_python.empty()) file["requires-python"] = w->requires_python;
      files_json.push_back(file);
      versions.insert(w->version);
    }
    for (const LinkedFile& f : others) {
      if (f.project != project) continue;
      const std::string name = f.path.filename().string();
      const std::string url = file_url(to_wheels, name);
      page += fmt::format("<a href=\"{}#sha256={}\">{}</a><br>\n", html_escape(url), f.sha256,
                          html_escape(name));
      files_json.push_back(
          {{"filename", name}, {"url", url}, {"hashes", {{"sha256", f.sha256}}}, {"size", f.size}});
    }
    page += "</body></html>\n";
    const nlohmann::ordered_json project_json = {{"meta", {{"api-version", "1.1"}}},
                                                 {"name", project},
                                                 {"files", files_json},
                                                 {"versions", versions}};
    if (auto r = write(simple_dir / project / "index.html", page); !r) return r;
    if (auto r = write(simple_dir / project / "index.json", json_text(project_json, 1) + "\n"); !r)
      return r;
  }
  root += "</body></html>\n";
  if (auto r = write(simple_dir / "index.html", root); !r) return r;
  return write(simple_dir / "index.json", json_text(root_json, 1) + "\n");
}

// The page `pip install --find-links <site>/wheels/` reads (a web server lists no folder).
Expected<Ok> write_find_links_page(const std::vector<const IndexedWheel*>& wheels,
                                   const stdfs::path& page) {
  std::string html = "<!DOCTYPE html>\n<html><head><title>Wheels</title></head><body>\n";
  for (const IndexedWheel* w : wheels) {
    const std::string name = w->path.filename().string();
    html += fmt::format("<a href=\"{}#sha256={}\">{}</a><br>\n", html_escape(file_url("", name)),
                        w->sha256, html_escape(name));
  }
  return write(page, html + "</body></html>\n");
}

Expected<Ok> write_metadata_file(const IndexedWheel& w, const stdfs::path& wheels_dir) {
  return write(wheels_dir / (w.path.filename().string() + ".metadata"), w.metadata);
}

}  // namespace

std::vector<const IndexedWheel*> cuda_index_wheels(const std::vector<IndexedWheel>& wheels,
                                                   int cuda_major) {
  // The major's wheels as a combined surface of their own (delivery.h): a torch that one of its
  // universal wheels serves gets that, an older one the per-torch wheels.
  std::vector<const IndexedWheel*> of_major;
  for (const IndexedWheel& w : wheels)
    if (w.cuda.major() == cuda_major) of_major.push_back(&w);
  return combined_surface(of_major).wheels;
}

namespace {

// The file that marks a folder as an index this tool wrote: only such a folder is replaced.
constexpr const char* kIndexMarker = ".sagebuild-index";

// Why `site` may not be (re)written, or nothing. An index replaces only an index: never a file,
// a folder of other things (docs, the wheels' own folder), or a folder holding an input.
std::optional<std::string> unsafe_target(const stdfs::path& site,
                                         const std::vector<IndexedWheel>& wheels) {
  std::error_code ec;
  if (site.filename().empty() || site == site.root_path()) {
    return fmt::format("'{}' is not a folder an index can be written to", site.string());
  }
  for (const IndexedWheel& w : wheels) {
    const stdfs::path input = stdfs::absolute(w.path, ec).lexically_normal();
    const auto rel = input.lexically_relative(site);
    if (!rel.empty() && *rel.begin() != "..") {
      return fmt::format("the input {} is inside {}; write the index somewhere else",
                         w.path.string(), site.string());
    }
  }
  const auto status = stdfs::symlink_status(site, ec);
  if (ec || !stdfs::exists(status)) return std::nullopt;
  if (!stdfs::is_directory(status)) {
    return fmt::format("{} exists and is not a folder; not replacing it", site.string());
  }
  if (stdfs::exists(site / kIndexMarker, ec)) return std::nullopt;
  const stdfs::directory_iterator first(site, ec);
  if (ec) return fmt::format("cannot read {}: {}; not replacing it", site.string(), ec.message());
  if (first == stdfs::directory_iterator()) return std::nullopt;  // empty
  return fmt::format(
      "{} exists and is not an index written by sagebuild (no {}); not replacing a folder of "
      "other files: remove it or choose another -o",
      site.string(), kIndexMarker);
}

// Per CUDA major among the wheels, the CUDA builds of torch that index serves: the wheels' own
// CUDA versions and the ones named, of that major.
std::map<int, std::set<Version>> cuda_builds(const std::vector<IndexedWheel>& wheels,
                                             const std::vector<Version>& torch_builds) {
  std::map<int, std::set<Version>> out;
  for (const IndexedWheel& w : wheels)
    out[w.cuda.major()].insert(
        *Version::parse(fmt::format("{}.{}", w.cuda.major(), w.cuda.minor())));
  for (const Version& v : torch_builds) {
    const auto it = out.find(v.major());
    if (it != out.end())
      it->second.insert(*Version::parse(fmt::format("{}.{}", v.major(), v.minor())));
  }
  return out;
}

// Removes the staging folder unless the index was moved into place.
struct StagingFolder {
  stdfs::path path;
  bool kept = false;
  ~StagingFolder() {
    std::error_code ec;
    if (!kept) stdfs::remove_all(path, ec);
  }
};

}  // namespace

Expected<IndexSummary> write_index(const std::vector<IndexedWheel>& wheels,
                                   const stdfs::path& target, const IndexOptions& options) {
  std::error_code ec;
  stdfs::path site = stdfs::absolute(target, ec).lexically_normal();
  if (site.filename().empty()) site = site.parent_path();  // "out/", "."
  if (auto why = unsafe_target(site, wheels)) {
    return Error{*why};
  }
  // Two wheels of one name from two folders: one file in the index. The same bytes twice are
  // one wheel; different bytes are an error naming both.
  std::map<std::string, const IndexedWheel*> by_name;
  for (const IndexedWheel& w : wheels) {
    const auto [it, fresh] = by_name.emplace(w.path.filename().string(), &w);
    if (!fresh && it->second->sha256 != w.sha256) {
      return Error{fmt::format("two different wheels named {}: {} (sha256 {}) and {} (sha256 {})",
                               it->first, it->second->path.string(), it->second->sha256,
                               w.path.string(), w.sha256)};
    }
  }
  const std::string unique = fmt::format("{:08x}", std::random_device{}());
  StagingFolder staging{site.parent_path() /
                        ("." + site.filename().string() + ".partial-" + unique)};
  const stdfs::path& temp = staging.path;
  stdfs::create_directories(temp / "wheels", ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", temp.string(), ec.message())};
  std::ofstream(temp / kIndexMarker) << "written by sagebuild index; replaced by the next run\n";
  // Every wheel under its delivered version: the labelled copies are the site's wheel files.
  std::vector<IndexedWheel> delivered;
  delivered.reserve(by_name.size());
  std::map<std::string, const IndexedWheel*> by_delivered_name;
  for (const auto& [file, w] : by_name) {
    auto labelled = labelled_copy(*w, temp / "wheels");
    if (!labelled) return labelled.error();
    const std::string name = labelled->path.filename().string();
    if (labelled->path.parent_path() != temp / "wheels") {  // labelled already: copied as is
      stdfs::copy_file(w->path, temp / "wheels" / name, stdfs::copy_options::none, ec);
      if (ec) return Error{fmt::format("cannot copy {}: {}", w->path.string(), ec.message())};
      labelled->path = temp / "wheels" / name;
    }
    if (const auto [it, fresh] = by_delivered_name.emplace(name, w); !fresh) {
      return Error{fmt::format("{} and {} are both delivered as {}", it->second->path.string(),
                               w->path.string(), name)};
    }
    delivered.push_back(std::move(*labelled));
  }
  std::vector<const IndexedWheel*> all;
  for (const IndexedWheel& w : delivered)
    all.push_back(&w);
  // Every index below is a subset of the combined one: if no environment can take two files of
  // one version there, it cannot in any of them.
  if (const auto ambiguities = find_ambiguities(all); !ambiguities.empty()) {
    return Error{fmt::format("no index written: {}", describe(ambiguities.front()))};
  }
  IndexSummary summary;
  // One index per per-torch variant, named by its label; a universal wheel's label is also the
  // name of a CUDA build's index below, which holds it.
  std::map<std::string, std::vector<const IndexedWheel*>> by_variant;
  for (const IndexedWheel* w : all)
    if (!w->stable_abi) by_variant[w->variant].push_back(w);
  for (const auto& [variant, list] : by_variant) {
    if (auto r = write_simple(list, temp / variant / "simple", "../../../wheels/"); !r)
      return r.error();
    summary.variants.push_back(variant);
  }
  // Per CUDA major, and per CUDA build of torch under PyTorch's names for them: the same wheels
  // (cuda_index_wheels) load with every torch of one CUDA major.
  for (const auto& [major, builds] : cuda_builds(delivered, options.torch_cuda_builds)) {
    const auto list = cuda_index_wheels(delivered, major);
    std::vector<std::string> names = {fmt::format("cu{}", major)};
    for (const Version& build : builds)
      names.push_back(fmt::format("cu{}{}", build.major(), build.minor()));
    for (const std::string& name : names) {
      if (auto r = write_simple(list, temp / name / "simple", "../../../wheels/"); !r)
        return r.error();
    }
    summary.cuda_indexes.push_back(names.front());
    summary.cuda_build_indexes.insert(summary.cuda_build_indexes.end(), names.begin() + 1,
                                      names.end());
  }
  // The universal wheels as variants (registry/wheel_variants.h), in an index of their own.
  if (options.variants) {
    std::vector<const IndexedWheel*> inputs;
    for (const auto& [file, w] : by_name)
      inputs.push_back(w);
    auto variants = write_variant_wheels(inputs, temp / "variants" / "wheels");
    if (!variants) return variants.error();
    std::vector<const IndexedWheel*> list;
    for (const IndexedWheel& w : variants->wheels) {
      if (auto r = write_metadata_file(w, temp / "variants" / "wheels"); !r) return r.error();
      list.push_back(&w);
    }
    if (auto r =
            write_simple(list, temp / "variants" / "simple", "../../wheels/", variants->manifests);
        !r) {
      return r.error();
    }
    summary.variant_wheels = list.size();
  }
  for (const IndexedWheel& w : delivered) {
    if (auto r = write_metadata_file(w, temp / "wheels"); !r) return r.error();
  }
  const CombinedSurface combined = combined_surface(all);
  for (const LeftOut& l : combined.left_out)
    summary.left_out_of_combined.push_back(describe(l));
  if (auto r = write_simple(combined.wheels, temp / "simple", "../../wheels/"); !r)
    return r.error();
  if (auto r = write_find_links_page(combined.wheels, temp / "wheels" / "index.html"); !r)
    return r.error();
  summary.wheels = wheels.size();
  // Replace the previous site (an index, unsafe_target made sure) only now that the new one is
  // complete; if the move fails, the previous one goes back.
  const stdfs::path old = site.parent_path() / ("." + site.filename().string() + ".old-" + unique);
  const bool had_site = stdfs::exists(site, ec);
  if (had_site) {
    stdfs::rename(site, old, ec);
    if (ec)
      return Error{
          fmt::format("cannot move the old index {} aside: {}", site.string(), ec.message())};
  }
  stdfs::rename(temp, site, ec);
  if (ec) {
    std::error_code restore;
    if (had_site) stdfs::rename(old, site, restore);
    return Error{fmt::format("cannot move the index into {}: {}", site.string(), ec.message())};
  }
  staging.kept = true;
  if (had_site) stdfs::remove_all(old, ec);
  return summary;
}

}  // namespace sagebuild::registry
