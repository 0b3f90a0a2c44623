// PEP 427 wheel file names, parsed with exactly the acceptance of
// packaging.utils.parse_wheel_filename (packaging 26.3) for ASCII names. Deliberate difference:
// names, versions and tags with non-ASCII characters are refused (packaging's \w and
// str.isidentifier() accept Unicode letters; core metadata and PEP 503 names are ASCII).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "wheel/pep440.h"

namespace sagebuild::wheel {

struct Tag {
  std::string interpreter, abi, platform;  // lower-cased, as packaging.tags.Tag stores them
  auto operator<=>(const Tag&) const = default;
  std::string str() const { return interpreter + "-" + abi + "-" + platform; }
};

struct BuildTag {
  std::string text;    // as written: "280.129"
  std::string number;  // leading digits, zeros stripped: "280"
  std::string suffix;  // the rest: ".129"
};

struct WheelFilename {
  std::string name_part;       // as written: "sage_attention"
  std::string canonical_name;  // PEP 503: "sage-attention"
  std::string version_text;    // as written
  Pep440Version version;
  std::optional<BuildTag> build;
  std::string tag_text;   // "cp312-cp312-linux_x86_64"
  std::vector<Tag> tags;  // the compressed tag set expanded, sorted, unique

  // The wheel's metadata folder as its archive names it: "sage_attention-2.2.0.dist-info/".
  std::string dist_info_dir() const;
};

Expected<WheelFilename> parse_wheel_filename(std::string_view filename);

// PEP 503 normalisation: runs of -_. become '-', lower case.
std::string canonicalize_name(std::string_view name);

}  // namespace sagebuild::wheel
