// Wheel variants (the draft PEP 825 package format with PEP 850's providers): the universal
// wheels again under their plain version, each with its variant label after the platform tag
// (the label it is delivered under elsewhere: cu128, cu130) and a .dist-info/variant.json saying
// which NVIDIA driver it needs, beside the index's {name}-{version}-variants.json. Among the
// files of one version an installer with variant support takes the newest CUDA the machine's
// driver runs, and refuses where none fits (uv 0.13.9 with `--preview-features wheel-variants`,
// through the NVIDIA provider it carries); installers without it skip such files.
// docs/build.md, "Wheel variants", says what is checked and what is missing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "registry/delivery.h"
#include "util/expected.h"

namespace sagebuild::registry {

// A file an index links to that is not a wheel (a variants.json).
struct LinkedFile {
  std::filesystem::path path;
  std::string project;  // PEP 503 normalized
  std::string sha256;   // hex
  std::uint64_t size = 0;
};

// The CUDA version the NVIDIA driver must run for the wheel's kernels: the first release of its
// CUDA major, since a universal wheel carries its CUDA runtime (static) and CUDA keeps minor
// version compatibility within a major, and its fat binary holds machine code for every
// architecture it lists (no PTX to compile for a newer driver).
std::string driver_cuda_floor(const IndexedWheel& wheel);

struct VariantFiles {
  std::vector<IndexedWheel> wheels;   // the variant copies
  std::vector<LinkedFile> manifests;  // one {name}-{version}-variants.json per version
};

// The variant copies of the universal wheels among `wheels`, and their variants.json files,
// written into `dir`. Per-torch wheels have none: which of them fits depends on torch, not on
// the machine.
Expected<VariantFiles> write_variant_wheels(const std::vector<const IndexedWheel*>& wheels,
                                            const std::filesystem::path& dir);

}  // namespace sagebuild::registry
