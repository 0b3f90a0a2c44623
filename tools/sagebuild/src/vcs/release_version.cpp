#include "vcs/release_version.h"

#include <fmt/format.h>

#include "wheel/filename.h"
#include "wheel/pep440.h"

namespace sagebuild::vcs {
namespace {

// Same version by PEP 440 (so tag v2.2 and file 2.2.0 agree), else by exact text.
bool same_version(std::string_view a, std::string_view b) {
  const auto pa = wheel::parse_pep440(a);
  const auto pb = wheel::parse_pep440(b);
  if (pa && pb) return pa->normalized == pb->normalized;
  return a == b;
}

}  // namespace

Expected<std::string> check_release_tag(std::string_view tag, std::string_view prefix,
                                        const std::vector<std::string>& file_names) {
  std::string version, first_wheel;
  for (const std::string& name : file_names) {
    if (!name.ends_with(".whl")) continue;
    const auto parsed = wheel::parse_wheel_filename(name);
    if (!parsed) continue;
    const std::string& public_version = parsed->version.public_part;
    if (version.empty()) {
      version = public_version;
      first_wheel = name;
    } else if (!same_version(version, public_version)) {
      return Error{fmt::format(
          "the wheels are of two versions, {} ({}) and {} ({}); one release holds one version",
          version, first_wheel, public_version, name)};
    }
  }
  if (version.empty()) return std::string();
  const bool prefixed = tag.starts_with(prefix);
  if (prefixed && same_version(tag.substr(prefix.size()), version)) return version;
  return Error{fmt::format(
      "--tag {} {}, but the wheels are version {} ({}); tag the release {}{}, or pass --any-tag "
      "to attach them to a tag that names no version (a rolling 'nightly' release, say)",
      tag,
      prefixed ? fmt::format("says version {}", tag.substr(prefix.size()))
               : fmt::format("is not {}<version>", prefix),
      version, first_wheel, prefix, version)};
}

std::string tag_from_github_ref(std::string_view ref) {
  constexpr std::string_view kTags = "refs/tags/";
  return ref.starts_with(kTags) ? std::string(ref.substr(kTags.size())) : std::string();
}

Expected<ResolvedVersion> resolve_version(const VersionInputs& in) {
  const std::string& prefix = in.policy.tag_prefix;
  ResolvedVersion r;
  r.version = in.file_version;

  // 1. Is this a release tag build? GITHUB_REF wins: in Actions it names what triggered the run.
  if (const std::string ref_tag = tag_from_github_ref(in.github_ref);
      !ref_tag.empty() && ref_tag.starts_with(prefix)) {
    r.tag = ref_tag;
    r.tag_origin = "GITHUB_REF";
  } else if (in.github_ref.empty() && in.git && in.git->tag && in.git->tag->distance == 0) {
    r.tag = in.git->tag->name;
    r.tag_origin = "HEAD";
  }
  if (!r.tag.empty()) {
    r.kind = BuildKind::release_tag;
    const std::string tagged = r.tag.substr(prefix.size());
    if (!same_version(tagged, in.file_version)) {
      return Error{fmt::format(
          "the release tag {} ({}) says version {}, but {} says {}; edit the version in {} to "
          "{} (or move the tag to a commit whose version is {})",
          r.tag, r.tag_origin == "HEAD" ? "at HEAD" : "from GITHUB_REF", tagged, in.version_file,
          in.file_version, in.version_file, tagged, tagged)};
    }
    return r;
  }

  // 2. Not a release: the file's version, or a dev version of it.
  if (in.policy.untagged == matrix::UntaggedVersion::release) return r;
  const auto parsed = wheel::parse_pep440(in.file_version);
  if (parsed && parsed->normalized.find(".dev") != std::string::npos) {
    return Error{fmt::format(
        "{} says {}, already a dev version; package.version.untagged: dev adds the dev number "
        "itself, so the file should hold the next release's version",
        in.version_file, in.file_version)};
  }
  if (!in.git) {
    return Error{fmt::format(
        "package.version.untagged asks for a dev version, which counts commits since the last "
        "release tag, but {} is not in a git checkout",
        in.version_file)};
  }
  int dev_number = 0;
  if (in.git->tag) {
    const std::string released = in.git->tag->name.substr(prefix.size());
    if (same_version(released, in.file_version)) {
      return Error{fmt::format(
          "{} still says {}, which the tag {} released {} commit{} ago; bump it to the next "
          "version, so that dev builds sort after the release",
          in.version_file, in.file_version, in.git->tag->name, in.git->tag->distance,
          in.git->tag->distance == 1 ? "" : "s")};
    }
    dev_number = in.git->tag->distance;
  } else if (!in.git->commits_in_history) {
    return Error{fmt::format(
        "this is a shallow clone without {}* tags, so the dev number (commits since the last "
        "release tag) cannot be counted; fetch the history (actions/checkout with "
        "fetch-depth: 0) or set package.version.untagged: release",
        prefix)};
  } else {
    dev_number = *in.git->commits_in_history;  // no release yet: every commit counts
  }
  r.version = fmt::format("{}.dev{}", in.file_version, dev_number);
  if (in.policy.untagged == matrix::UntaggedVersion::dev_local) {
    r.version += "+g" + in.git->commit.substr(0, 12);
  }
  return r;
}

}  // namespace sagebuild::vcs
