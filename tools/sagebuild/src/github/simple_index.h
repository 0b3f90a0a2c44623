// A static package index for wheels: PEP 503 HTML and its PEP 691 JSON form, one index per
// torch/CUDA variant ("torch2.8-cu129", like PyTorch's per-CUDA indexes) so that
//   pip install sageattention --index-url <site>/torch2.8-cu129/simple
// finds only wheels built for that torch, plus a combined index of everything. Servable as plain
// files (GitHub Pages, any web server): HTML at .../index.html, JSON at .../index.json.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "util/expected.h"

namespace sagebuild::github {

struct IndexedWheel {
  std::filesystem::path path;
  std::string project;  // PEP 503 normalized
  std::string version;
  std::string variant;          // "torch2.8-cu129"
  std::string sha256;           // hex
  std::string requires_python;  // from METADATA, may be ""
  std::uint64_t size = 0;
};

// Reads what the index needs from a wheel: name, version, the variant from its provenance.
Expected<IndexedWheel> describe_wheel(const std::filesystem::path& wheel);

struct IndexSummary {
  std::size_t wheels = 0;
  std::vector<std::string> variants;
};

// Writes site/<variant>/simple/... and site/simple/..., copying the wheels to site/wheels/.
// The site directory is written to a temporary sibling and renamed into place at the end.
Expected<IndexSummary> write_index(const std::vector<IndexedWheel>& wheels,
                                   const std::filesystem::path& site);

}  // namespace sagebuild::github
