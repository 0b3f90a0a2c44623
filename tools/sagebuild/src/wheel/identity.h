// A wheel's identity, decided once from the facts of the build it comes from (docs/build.md):
// its build tag, tags and file name (and those of its platform's fallback tag), the torch pin it
// carries, the glibc floor its platform tag asks for, the architectures it must hold. The
// build, the repack, verification, the plan and the matrix's outputs all read it from here;
// nothing derives a part of it again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/version.h"
#include "wheel/naming.h"

namespace sagebuild::wheel {

// What a build is, in the terms a wheel's identity follows from.
struct WheelFacts {
  std::string distribution;  // "sageattention"
  std::string version;       // "2.2.0"
  Version torch;             // for a stable-ABI wheel, the target
  Version cuda;
  Version python;  // one Python's wheel: that Python; a wheel of every Python: the builder
  bool every_python = false;  // py3-none: every Python takes it
  bool stable_abi = false;    // the torch pin is ">=torch" (the stable ABI), else "==X.Y.*"
  std::string platform_tag;
  std::string fallback_platform_tag;  // "" when the platform has none
  std::vector<std::string> archs;
};

struct WheelIdentity {
  std::string distribution;
  std::string version;
  std::string build_tag;  // "280.129"
  WheelTags tags;
  std::string file_name;
  std::optional<WheelTags> fallback_tags;  // the platform's fallback tag, when it has one
  std::string fallback_file_name;
  std::string torch_requirement;  // "torch==2.8.*", "torch>=2.10"
  // The newest glibc symbol version the binaries may need: "2.28" for manylinux_2_28_* (from the
  // tag's policy), "" for a tag without one (linux_x86_64, win_amd64).
  std::string glibc_floor;
  std::vector<std::string> archs;
};

WheelIdentity identify(const WheelFacts& facts);

}  // namespace sagebuild::wheel
