// A static package index for wheels: PEP 503 HTML and its PEP 691 JSON form. Servable as plain
// files (GitHub Pages, any web server): HTML at .../index.html, JSON at .../index.json.
//   <site>/cu13/simple             one per CUDA major: the universal (stable-ABI) wheels of that
//                                  major, and the per-torch wheels of the torch releases older
//                                  than their target. With torch installed, pip takes from it
//                                  the one wheel that fits: torch >= 2.10 the universal wheel
//                                  (Requires-Dist torch>=2.10), older torch its per-torch wheel
//                                  (torch==X.Y.*) (docs/build.md, "Universal wheels"). pip weighs
//                                  one file per version, so the universal wheels are served here
//                                  under a local version, 2.2.0+cu130, which pip tries first and
//                                  leaves for the plain 2.2.0 per-torch wheels when their torch
//                                  pin cannot be met (PyTorch's own indexes label versions so).
//   <site>/torch2.8-cu129/simple   one per variant, like PyTorch's per-CUDA indexes: only the
//                                  wheels built for that torch and CUDA ("stable-torch2.10-cu130"
//                                  for the universal ones)
//   <site>/simple                  everything
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/version.h"

namespace sagebuild::registry {

struct IndexedWheel {
  std::filesystem::path path;
  std::string project;  // PEP 503 normalized
  std::string version;
  std::string variant;                   // "torch2.8-cu129", "stable-torch2.10-cu130"
  bool stable_abi = false;               // a universal wheel (provenance abi "stable")
  Version torch = *Version::parse("0");  // built against (the target, for the stable ABI)
  Version cuda = *Version::parse("0");
  std::string sha256;           // hex
  std::string requires_python;  // from METADATA, may be ""
  std::uint64_t size = 0;
  std::string metadata;    // METADATA, served beside the wheel (PEP 658)
  std::string provenance;  // sagebuild.json as written
};

// Reads what the index needs from a wheel: name, version, the variant from its provenance.
Expected<IndexedWheel> describe_wheel(const std::filesystem::path& wheel);

struct IndexSummary {
  std::size_t wheels = 0;
  std::vector<std::string> variants;
  std::vector<std::string> cuda_indexes;  // "cu12", "cu13"
};

// The wheels of one CUDA major's index (see above), in the given order.
std::vector<const IndexedWheel*> cuda_index_wheels(const std::vector<IndexedWheel>& wheels,
                                                   int cuda_major);

// Writes site/<variant>/simple/... and site/simple/..., copying the wheels to site/wheels/.
// The site directory is written to a temporary sibling and renamed into place at the end.
Expected<IndexSummary> write_index(const std::vector<IndexedWheel>& wheels,
                                   const std::filesystem::path& site);

}  // namespace sagebuild::registry
