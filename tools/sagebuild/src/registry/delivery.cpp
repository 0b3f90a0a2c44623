#include "registry/delivery.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "util/sha256.h"
#include "util/text.h"
#include "wheel/dist_info.h"
#include "wheel/filename.h"
#include "wheel/provenance.h"
#include "wheel/repack.h"
#include "wheel/zip_archive.h"

namespace sagebuild::registry {
namespace {

namespace stdfs = std::filesystem;

// The variant's one name: its local version label (variant_label in delivery.h).
std::string label_of(bool stable_abi, const Version& torch, const Version& cuda) {
  std::string label = fmt::format("cu{}{}", cuda.major(), cuda.minor());
  if (stable_abi) return label;
  return fmt::format("{}torch{}.{}", label, torch.major(), torch.minor());
}

std::string variant_of(const wheel::Provenance& p) {
  const auto torch = Version::parse(p.torch);
  const auto cuda = Version::parse(p.cuda);
  if (!torch || !cuda) return "";
  return label_of(p.abi == "stable", *torch, *cuda);
}

// What one compatibility tag asks of an environment, in the terms that decide overlap: the
// CPython minors that take it, the platform family, and how much pip prefers it there.
struct TagReach {
  std::string interpreter_family;  // "cpython" for cp/py tags, else the tag itself
  int lowest_minor = 0;            // Python 3.<minor>
  int highest_minor = 1000;
  std::string platform;  // "linux-x86_64" (glibc), "musllinux-x86_64", "win_amd64", "any"
  int preference = 0;    // higher: pip prefers it (cp312-cp312 over cp312-abi3 over py3)
};

std::optional<int> minor_of(std::string_view digits) {
  if (digits.size() < 2 || digits[0] != '3') return std::nullopt;
  int minor = 0;
  for (const char c : digits.substr(1)) {
    if (c < '0' || c > '9' || minor > 1000) return std::nullopt;
    minor = minor * 10 + (c - '0');
  }
  return minor;
}

std::string platform_family(const std::string& platform) {
  if (platform == "any") return platform;
  for (const std::string_view glibc : {"manylinux", "linux_"}) {
    if (!platform.starts_with(glibc)) continue;
    // manylinux1_x86_64, manylinux2014_aarch64, manylinux_2_28_x86_64, linux_x86_64: the arch
    // is what follows the last policy number.
    for (const std::string_view arch :
         {"x86_64", "aarch64", "i686", "ppc64le", "s390x", "armv7l"}) {
      if (platform.ends_with(arch)) return "linux-" + std::string(arch);
    }
    return platform;
  }
  if (platform.starts_with("musllinux_")) {
    return "musllinux-" + platform.substr(platform.find('_', platform.find('_') + 1) + 1);
  }
  if (platform.starts_with("macosx_")) return "macosx-" + platform.substr(platform.rfind('_') + 1);
  return platform;
}

TagReach reach_of(const wheel::Tag& tag) {
  TagReach r;
  r.platform = platform_family(tag.platform);
  const std::string& interp = tag.interpreter;
  if (interp.starts_with("cp")) {
    r.interpreter_family = "cpython";
    const auto minor = minor_of(std::string_view(interp).substr(2));
    if (!minor) {
      r.interpreter_family = interp;
      return r;
    }
    r.lowest_minor = *minor;
    if (tag.abi == "abi3") {
      r.preference = 4;  // cp3X-abi3: this Python and every later one
    } else {
      r.highest_minor = *minor;
      r.preference = tag.abi == "none" ? 3 : 5;
    }
  } else if (interp == "py3") {
    r.interpreter_family = "cpython";
    r.preference = 1;
  } else if (interp.starts_with("py3")) {
    r.interpreter_family = "cpython";
    const auto minor = minor_of(std::string_view(interp).substr(2));
    if (minor) r.lowest_minor = *minor;
    r.preference = 2;
  } else {
    r.interpreter_family = interp;  // py2, pp310, ...: only meets itself
  }
  return r;
}

std::string platform_words(const std::string& family) {
  if (family.starts_with("linux-")) return "Linux " + family.substr(6);
  if (family.starts_with("musllinux-")) return "musl Linux " + family.substr(10);
  if (family == "win_amd64") return "Windows x64";
  if (family == "any") return "any platform";
  return family;
}

// The build number a wheel carries, for pip's tie-break between files of one tag.
std::pair<long long, std::string> build_order(const wheel::WheelFilename& name) {
  if (!name.build) return {-1, ""};
  long long number = 0;
  for (const char c : name.build->number)
    number = std::min<long long>(number * 10 + (c - '0'), 1'000'000'000'000LL);
  return {number, name.build->suffix};
}

}  // namespace

Expected<IndexedWheel> describe_wheel(const stdfs::path& path) {
  auto name = wheel::parse_wheel_filename(path.filename().string());
  if (!name) return name.error();
  auto archive = wheel::ZipArchive::open(path);
  if (!archive) return archive.error();
  IndexedWheel w;
  w.path = path;
  w.project = name->canonical_name;
  w.version = name->version.normalized;
  const std::string dist_info = name->dist_info_dir();
  auto stream = archive->open_stream();
  std::vector<std::uint8_t> data, scratch;
  for (const auto& e : archive->entries()) {
    if (e.name == dist_info + std::string(wheel::kProvenanceFile)) {
      if (auto error = archive->read(stream, e, data, scratch)) return Error{error->message};
      w.provenance.assign(data.begin(), data.end());
      auto p = wheel::Provenance::parse(w.provenance);
      if (!p) return p.error();
      w.variant = variant_of(*p);
      w.stable_abi = p->abi == "stable";
      if (auto v = Version::parse(p->torch)) w.torch = *v;
      if (auto v = Version::parse(p->cuda)) w.cuda = *v;
    } else if (e.name == dist_info + "METADATA") {
      if (auto error = archive->read(stream, e, data, scratch)) return Error{error->message};
      w.metadata.assign(data.begin(), data.end());
      auto h = wheel::Headers::parse(w.metadata);
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

std::string variant_label(const IndexedWheel& w) {
  if (w.variant.empty()) return "";  // not built by sagebuild: no provenance to label from
  return label_of(w.stable_abi, w.torch, w.cuda);
}

std::string delivered_version(const IndexedWheel& w) {
  const std::string label = variant_label(w);
  const auto plus = w.version.find('+');
  if (plus == std::string::npos) return w.version + "+" + label;
  if (w.version.ends_with("+" + label) || w.version.ends_with("." + label)) return w.version;
  return w.version + "." + label;
}

Expected<stdfs::path> repacked_copy(const IndexedWheel& w, const stdfs::path& dir,
                                    const std::string& version, const std::string& variant_label,
                                    const std::string& variant_json) {
  auto name = wheel::parse_wheel_filename(w.path.filename().string());
  if (!name) return name.error();
  if (!name->build) return Error{w.path.filename().string() + " has no build tag"};
  auto provenance = wheel::Provenance::parse(w.provenance);
  if (!provenance) return provenance.error();
  provenance->version = version;
  wheel::RepackRequest request{w.path, dir, name->build->text, *provenance};
  request.version = version;
  request.require_record_match = true;
  request.variant_label = variant_label;
  request.variant_json = variant_json;
  return wheel::repack_wheel(request);
}

Expected<IndexedWheel> labelled_copy(const IndexedWheel& w, const stdfs::path& dir) {
  const std::string version = delivered_version(w);
  if (version == w.version) return w;
  auto repacked = repacked_copy(w, dir, version);
  if (!repacked) {
    return Error{fmt::format("cannot label {} as {}: {}", w.path.filename().string(), version,
                             repacked.error().message)};
  }
  return describe_wheel(*repacked);
}

std::vector<Ambiguity> find_ambiguities(const std::vector<const IndexedWheel*>& wheels) {
  struct Named {
    const IndexedWheel* wheel;
    wheel::WheelFilename name;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Named>> by_version;
  for (const IndexedWheel* w : wheels) {
    auto name = wheel::parse_wheel_filename(w->path.filename().string());
    if (name) by_version[{w->project, w->version}].push_back({w, std::move(*name)});
  }
  std::vector<Ambiguity> found;
  for (const auto& [key, files] : by_version) {
    std::vector<bool> hidden(files.size(), false);
    for (std::size_t i = 0; i < files.size(); ++i) {
      for (std::size_t j = i + 1; j < files.size(); ++j) {
        if (hidden[i] || hidden[j]) continue;
        // The first environment (tag pair) that takes both, with each file's preference there.
        std::optional<Ambiguity> pair;
        for (const wheel::Tag& a : files[i].name.tags) {
          for (const wheel::Tag& b : files[j].name.tags) {
            if (pair) break;
            const TagReach ra = reach_of(a), rb = reach_of(b);
            const int low = std::max(ra.lowest_minor, rb.lowest_minor);
            const int high = std::min(ra.highest_minor, rb.highest_minor);
            const bool same_platform =
                ra.platform == rb.platform || ra.platform == "any" || rb.platform == "any";
            if (ra.interpreter_family != rb.interpreter_family || low > high || !same_platform)
              continue;
            const std::string platform = ra.platform == "any" ? rb.platform : ra.platform;
            const std::string python =
                ra.interpreter_family == "cpython"
                    ? (low == 0 || low >= 1000 ? "CPython 3" : fmt::format("CPython 3.{}", low))
                    : ra.interpreter_family;
            const bool i_first = ra.preference != rb.preference
                                     ? ra.preference > rb.preference
                                     : build_order(files[i].name) >= build_order(files[j].name);
            pair = Ambiguity{i_first ? files[i].wheel : files[j].wheel,
                             i_first ? files[j].wheel : files[i].wheel,
                             fmt::format("{} on {}", python, platform_words(platform))};
          }
        }
        if (!pair) continue;
        hidden[pair->hidden == files[i].wheel ? i : j] = true;
        found.push_back(*pair);
      }
    }
  }
  return found;
}

std::string describe(const Ambiguity& a) {
  const std::string taken = a.taken->path.filename().string();
  const std::string label = variant_label(*a.taken), other = variant_label(*a.hidden);
  const std::string public_version = a.taken->version.substr(0, a.taken->version.find('+'));
  return fmt::format(
      "{} and {} share version {} and {} can take both: pip and uv weigh only {} and never try "
      "the other; {}",
      taken, a.hidden->path.filename().string(), a.taken->version, a.environment, taken,
      label.empty() || label == other
          ? "keep one of them in this namespace"
          : fmt::format("deliver each variant under its own local version ({0}+{1}, {0}+{2}) or "
                        "in a namespace of its own",
                        public_version, label, other));
}

namespace {

// The platform families a wheel's tags reach ("linux-x86_64", "win_amd64").
std::vector<std::string> platforms_of(const IndexedWheel& w) {
  std::vector<std::string> out;
  if (auto name = wheel::parse_wheel_filename(w.path.filename().string())) {
    for (const wheel::Tag& tag : name->tags)
      out.push_back(reach_of(tag).platform);
  }
  return out;
}

std::string public_part(const std::string& version) {
  return version.substr(0, version.find('+'));
}

// Does the universal wheel `u` serve every environment the per-torch wheel `p` serves: the same
// project and release, a stable-ABI target no newer than p's torch, and a platform in common
// (a universal wheel is py3: every Python).
bool serves(const IndexedWheel& u, const IndexedWheel& p) {
  if (!u.stable_abi || p.stable_abi || u.project != p.project ||
      public_part(u.version) != public_part(p.version) || u.torch.major() != p.torch.major() ||
      u.torch.minor() > p.torch.minor()) {
    return false;
  }
  const auto mine = platforms_of(p);
  for (const std::string& platform : platforms_of(u)) {
    if (platform == "any" || std::find(mine.begin(), mine.end(), platform) != mine.end())
      return true;
  }
  return false;
}

}  // namespace

CombinedSurface combined_surface(const std::vector<const IndexedWheel*>& wheels) {
  CombinedSurface out;
  for (const IndexedWheel* w : wheels) {
    const auto by = std::find_if(wheels.begin(), wheels.end(),
                                 [&](const IndexedWheel* u) { return serves(*u, *w); });
    if (by == wheels.end()) {
      out.wheels.push_back(w);
    } else {
      out.left_out.push_back({w, *by});
    }
  }
  return out;
}

std::string describe(const LeftOut& l) {
  return fmt::format(
      "{} is for the per-CUDA indexes only: on a combined surface every CUDA build of torch "
      "{}.{} would take it, and it loads only with CUDA {} builds; the universal {} serves them "
      "all",
      l.wheel->path.filename().string(), l.wheel->torch.major(), l.wheel->torch.minor(),
      l.wheel->cuda.major(), l.served_by->path.filename().string());
}

}  // namespace sagebuild::registry
