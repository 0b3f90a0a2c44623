// A static package index for wheels: PEP 503 HTML and its PEP 691 JSON form, PEP 658 metadata
// beside each wheel. Servable as plain files (GitHub Pages, any web server): HTML at
// .../index.html, JSON at .../index.json. Every wheel is served under its delivered version
// (registry/delivery.h: 2.2.0+cu130, 2.2.0+cu128torch2.9), so that in every index below each
// version is one variant and pip's and uv's backtracking over versions finds the one that fits
// the installed torch:
//   <site>/cu128/simple            one per CUDA build of torch, under PyTorch's names for them
//                                  (the suffix of the user's torch): the wheels whose kernels
//                                  load with that torch, the same for every build of one major
//   <site>/cu12/simple             the same, per CUDA major: the universal (stable-ABI) wheels
//                                  of that major, and the per-torch wheels of the torch releases
//                                  older than their target (docs/build.md, "How pip and uv choose")
//   <site>/cu128torch2.9/simple    one per per-torch variant, named by its label: only its wheels
//   <site>/variants/simple         the universal wheels as wheel variants, chosen by the NVIDIA
//                                  driver (registry/wheel_variants.h)
//   <site>/simple                  everything a combined surface may carry: all but the per-torch
//                                  wheels a universal wheel also serves (combined_surface)
//   <site>/wheels/                 the wheel files, and index.html listing the same set as
//                                  simple/ for `pip install --find-links`
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
  std::vector<std::string> variants;            // "cu128torch2.9"
  std::vector<std::string> cuda_indexes;        // "cu12", "cu13"
  std::vector<std::string> cuda_build_indexes;  // "cu126", "cu128", "cu130"
  std::size_t variant_wheels = 0;
  // Not in simple/ and the find-links page (combined_surface), one line each (describe).
  std::vector<std::string> left_out_of_combined;
};

struct IndexOptions {
  // The CUDA builds of torch to name an index after (matrix.yaml's torch table), beside the
  // wheels' own CUDA versions; only those of a major the wheels have.
  std::vector<Version> torch_cuda_builds;
  bool variants = true;  // write <site>/variants/
};

// The wheels of one CUDA major's index (see above), in the given order.
std::vector<const IndexedWheel*> cuda_index_wheels(const std::vector<IndexedWheel>& wheels,
                                                   int cuda_major);

// Writes the site above, the wheels labelled into site/wheels/. Refuses a set in which one
// environment could take two files of one delivered version (two builds of one variant). The
// site directory is written to a temporary sibling and renamed into place at the end.
Expected<IndexSummary> write_index(const std::vector<IndexedWheel>& wheels,
                                   const std::filesystem::path& site,
                                   const IndexOptions& options = {});

}  // namespace sagebuild::registry
