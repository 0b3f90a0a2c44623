// Re-packs a wheel that a build backend produced into the convention's form: the build tag in
// the file name and in WHEEL's Build line, the tags it is published under, the provenance record
// added to the .dist-info, RECORD rewritten for the new contents, entries in a fixed order (package
// files sorted, .dist-info last, RECORD last of all) with fixed timestamps and permissions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"
#include "wheel/naming.h"
#include "wheel/provenance.h"

namespace sagebuild::wheel {

struct RepackRequest {
  std::filesystem::path input;       // the backend's wheel
  std::filesystem::path output_dir;  // where the result goes (written beside, then renamed)
  std::string build_tag;             // "2110.130"
  Provenance provenance;
  // The version to publish under, when it differs from the one the backend built (a dev
  // version from git): the .dist-info and .data directories are renamed and METADATA's
  // Version rewritten. Empty: keep the built version.
  std::string version = {};
  std::int64_t source_date_epoch = 315532800;  // ZIP timestamps (1980-01-01 when unknown)
  // The tags the wheel is published under, when they differ from the backend's: WHEEL's Tag
  // lines and the file name say these instead (a stable-ABI wheel's py3-none, a manylinux tag).
  std::optional<WheelTags> tags = {};
  // A delivery's copy of a finished wheel (a labelled copy): every member must be what the
  // input's RECORD vouches for (sha256 and size) and RECORD must list them all, so that a fresh
  // RECORD is never written over content that changed after the wheel was made.
  bool require_record_match = false;
  // A variant wheel (PEP 825): the label goes after the platform tag in the file name and
  // `variant_json` into the .dist-info as variant.json. Empty: an ordinary wheel.
  std::string variant_label = {};
  std::string variant_json = {};
};

// Returns the path of the new wheel. The input is never modified.
Expected<std::filesystem::path> repack_wheel(const RepackRequest& request);

// Whether a file is installed executable (0755; else 0644): an ELF or PE binary or a script
// with a #! line. Decided by content, so that how a backend installed a file (a copied cached
// library, a compiled target, stripped or not) never changes a wheel's bytes.
bool executable_content(const std::vector<std::uint8_t>& data);

// A RECORD line for `path`: "path,sha256=<b64>,size" with CSV quoting where needed.
std::string record_line(const std::string& path, const std::string& hash, const std::string& size);

}  // namespace sagebuild::wheel
