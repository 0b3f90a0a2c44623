// How a wheel was built, recorded inside it as {name}-{version}.dist-info/sagebuild.json:
// written by `sagebuild build`, printed and cross-checked by `sagebuild verify-wheel`. It makes
// the build tag unambiguous (2.11.0 and 2.1.10 share the tag digits; provenance does not).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/expected.h"

namespace sagebuild::wheel {

inline constexpr std::string_view kProvenanceFile = "sagebuild.json";

struct Provenance {
  int schema = 1;
  std::string sagebuild_version;
  std::string commit;  // full hex, or "" outside git
  bool dirty = false;
  std::string entry;  // matrix entry id, or "" for --env current builds
  std::string package;
  std::string version;
  std::string torch;  // "2.8.0": the torch built against (for the stable ABI, the oldest it
                      // loads in: its TORCH_TARGET_VERSION)
  // "per-torch", "per-torch-py3" or "stable" (matrix.yaml's abi axis)
  std::string abi = "per-torch";
  std::string cuda;    // "12.9.1" (full toolkit version)
  std::string python;  // "3.12"
  std::string platform_tag;
  std::vector<std::string> archs;  // TORCH_CUDA_ARCH_LIST items, "+PTX" where PTX is embedded
  std::vector<std::string> flags;  // compiler flags that affect the binaries

  nlohmann::ordered_json to_json() const;
  static Expected<Provenance> parse(std::string_view text);
};

}  // namespace sagebuild::wheel
