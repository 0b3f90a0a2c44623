#include "registry/wheel_variants.h"

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/json_text.h"
#include "util/sha256.h"
#include "wheel/zip_archive.h"

namespace sagebuild::registry {
namespace {

namespace stdfs = std::filesystem;

// The schema uv 0.13.9 knows for variant metadata with providers.
constexpr const char* kSchema = "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json";
constexpr const char* kNamespace = "nvidia";
constexpr const char* kDriverFeature = "cuda_version_lower_bound";

// The version a variant copy carries: the wheel's own, without the local label that delivery
// elsewhere gives it (one version, told apart by variant labels instead).
std::string plain_version(const IndexedWheel& w) {
  const std::string label = variant_label(w);
  if (w.version.ends_with("+" + label))
    return w.version.substr(0, w.version.size() - label.size() - 1);
  return w.version;
}

// variant.json for the labels given (all of one version's in the index's file, one in a
// wheel). No priorities beyond the namespace: the NVIDIA provider ranks the lower bounds the
// driver meets newest first (PEP 850 v0.2.0, the format uv 0.13.9 reads, has no `property`).
nlohmann::ordered_json variant_metadata(const std::map<std::string, std::string>& floor_by_label,
                                        const std::vector<std::string>& labels) {
  nlohmann::ordered_json variants = nlohmann::ordered_json::object();
  for (const std::string& label : labels)
    variants[label] = {{kNamespace, {{kDriverFeature, {floor_by_label.at(label)}}}}};
  return {{"$schema", kSchema},
          {"default-priorities", {{"namespace", {kNamespace}}}},
          {"providers",
           {{kNamespace,
             {{"requires", {"nvidia-variant-provider"}},
              {"plugin-api", "nvidia_variant_provider.plugin:NvidiaVariantPlugin"}}}}},
          {"variants", variants}};
}

// The METADATA of a wheel whose name parse_wheel_filename does not take (a variant label).
Expected<std::string> metadata_of(const stdfs::path& wheel) {
  auto archive = wheel::ZipArchive::open(wheel);
  if (!archive) return archive.error();
  auto stream = archive->open_stream();
  std::vector<std::uint8_t> data, scratch;
  for (const auto& e : archive->entries()) {
    const auto slash = e.name.find('/');
    if (slash == std::string::npos || e.name.substr(slash) != "/METADATA" ||
        !e.name.substr(0, slash).ends_with(".dist-info"))
      continue;
    if (auto error = archive->read(stream, e, data, scratch)) return Error{error->message};
    return std::string(data.begin(), data.end());
  }
  return Error{wheel.filename().string() + " has no .dist-info/METADATA"};
}

}  // namespace

std::string driver_cuda_floor(const IndexedWheel& wheel) {
  return fmt::format("{}.0", wheel.cuda.major());
}

Expected<VariantFiles> write_variant_wheels(const std::vector<const IndexedWheel*>& wheels,
                                            const stdfs::path& dir) {
  // (project, version) -> label -> driver floor, for the variants.json of each version.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> versions;
  std::vector<const IndexedWheel*> universal;
  for (const IndexedWheel* w : wheels) {
    if (!w->stable_abi) continue;
    universal.push_back(w);
    versions[{w->project, plain_version(*w)}][variant_label(*w)] = driver_cuda_floor(*w);
  }
  VariantFiles out;
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", dir.string(), ec.message())};
  for (const IndexedWheel* w : universal) {
    const std::string version = plain_version(*w), label = variant_label(*w);
    auto repacked = repacked_copy(
        *w, dir, version, label,
        json_text(variant_metadata(versions.at({w->project, version}), {label}), 2) + "\n");
    if (!repacked) {
      return Error{fmt::format("cannot make the {} variant of {}: {}", label,
                               w->path.filename().string(), repacked.error().message)};
    }
    IndexedWheel copy = *w;
    copy.path = *repacked;
    copy.version = version;
    // Served beside the wheel (PEP 658): the copy's own, whose Version the repack rewrote.
    auto metadata = metadata_of(copy.path);
    if (!metadata) return metadata.error();
    copy.metadata = std::move(*metadata);
    auto digest = sha256_file(copy.path);
    if (!digest) return digest.error();
    copy.sha256 = to_hex(digest->digest);
    copy.size = digest->size;
    out.wheels.push_back(std::move(copy));
  }
  for (const auto& [key, labels] : versions) {
    std::vector<std::string> names;
    for (const auto& [label, floor] : labels)
      names.push_back(label);
    // PEP 825: {name}-{version}-variants.json, both normalized as in wheel file names.
    std::string file_name = key.first;
    for (char& c : file_name)
      if (c == '-') c = '_';
    const stdfs::path path = dir / fmt::format("{}-{}-variants.json", file_name, key.second);
    const std::string text = json_text(variant_metadata(labels, names), 2) + "\n";
    std::ofstream(path, std::ios::binary) << text;
    auto digest = sha256_file(path);
    if (!digest) return Error{fmt::format("cannot write {}", path.string())};
    out.manifests.push_back({path, key.first, to_hex(digest->digest), digest->size});
  }
  return out;
}

}  // namespace sagebuild::registry
