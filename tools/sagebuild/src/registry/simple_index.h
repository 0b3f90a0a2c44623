// A static package index for wheels: PEP 503 HTML and its PEP 691 JSON form, PEP 658 metadata
// beside each wheel. Servable as plain files (GitHub Pages, any web server): HTML at
// .../index.html, JSON at .../index.json. Every wheel is served under its delivered version
// (registry/delivery.h: 2.2.0+cu130, 2.2.0+cu128torch2.9), so that in every index below each
// version is one variant and pip's and uv's backtracking over versions finds the one that fits
// the installed torch:
//   <site>/cu13/simple             one per CUDA major: the universal (stable-ABI) wheels of that
//                                  major, and the per-torch wheels of the torch releases older
//                                  than their target (docs/build.md, "How pip and uv choose")
//   <site>/torch2.8-cu129/simple   one per variant, like PyTorch's per-CUDA indexes: only the
//                                  wheels built for that torch and CUDA ("stable-torch2.10-cu130"
//                                  for the universal ones)
//   <site>/simple                  everything
//   <site>/wheels/                 the wheel files, and index.html listing them for
//                                  `pip install --find-links`
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "registry/delivery.h"
#include "util/expected.h"

namespace sagebuild::registry {

struct IndexSummary {
  std::size_t wheels = 0;
  std::vector<std::string> variants;
  std::vector<std::string> cuda_indexes;  // "cu12", "cu13"
};

// The wheels of one CUDA major's index (see above), in the given order.
std::vector<const IndexedWheel*> cuda_index_wheels(const std::vector<IndexedWheel>& wheels,
                                                   int cuda_major);

// Writes the site above, the wheels labelled into site/wheels/. Refuses a set in which one
// environment could take two files of one delivered version (two builds of one variant). The
// site directory is written to a temporary sibling and renamed into place at the end.
Expected<IndexSummary> write_index(const std::vector<IndexedWheel>& wheels,
                                   const std::filesystem::path& site);

}  // namespace sagebuild::registry
