// How a wheel reaches users: the one place that decides the name a built wheel is delivered
// under, and whether a set of wheels can share one namespace (an index, a registry, a release's
// assets used with --find-links). docs/build.md, "How pip and uv choose", says why.
//
// pip and uv weigh one file per version: among the files of 2.2.0 they take the one with the
// most specific tag for the interpreter and check only its requirements; when those fail they
// backtrack to another version, never to another file of the same version. So every wheel is
// delivered under its variant's local version label (2.2.0+cu130 for a universal wheel,
// 2.2.0+cu128torch2.9 for a per-torch one) and, with torch out of the resolver's reach, the
// backtracking over versions finds the variant that fits the installed torch.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/version.h"

namespace sagebuild::registry {

struct IndexedWheel {
  std::filesystem::path path;
  std::string project;  // PEP 503 normalized
  std::string version;
  std::string variant;                   // its label: "cu129torch2.8", "cu130" (variant_label)
  bool stable_abi = false;               // a universal wheel (provenance abi "stable")
  Version torch = *Version::parse("0");  // built against (the target, for the stable ABI)
  Version cuda = *Version::parse("0");
  std::string sha256;           // hex
  std::string requires_python;  // from METADATA, may be ""
  std::uint64_t size = 0;
  std::string metadata;    // METADATA, served beside the wheel (PEP 658)
  std::string provenance;  // sagebuild.json as written
};

// Reads what delivery needs from a wheel: name, version, the variant from its provenance.
Expected<IndexedWheel> describe_wheel(const std::filesystem::path& wheel);

// The local version label of the wheel's variant: "cu130" for a universal (stable-ABI) wheel,
// as PyTorch's indexes label CUDA builds; "cu128torch2.9" for a per-torch wheel (CUDA, then
// the torch release its Requires-Dist pins); "" for a wheel without provenance.
std::string variant_label(const IndexedWheel& wheel);

// The version the wheel is delivered under: its version with the variant label appended
// ("2.2.0+cu130"; "2.2.0.dev3+g1a2b.cu130" when it has a local part already). A wheel that
// already ends with its label keeps its version.
std::string delivered_version(const IndexedWheel& wheel);

// The wheel repacked into `dir` under `version`, every member first checked against its RECORD
// (a copy is never made of content changed after the wheel was made); with a variant label
// (registry/wheel_variants.h), the label in its name and `variant_json` as its variant.json.
// Returns the new file's path.
Expected<std::filesystem::path> repacked_copy(const IndexedWheel& wheel,
                                              const std::filesystem::path& dir,
                                              const std::string& version,
                                              const std::string& variant_label = "",
                                              const std::string& variant_json = "");

// The wheel again under delivered_version(), into `dir` (repacked: dist-info, METADATA,
// provenance and RECORD agree; the same input gives the same bytes). A wheel already
// labelled is described where it is, not copied.
Expected<IndexedWheel> labelled_copy(const IndexedWheel& wheel, const std::filesystem::path& dir);

// Two wheels of one version that one environment could both take: pip and uv would weigh only
// the one with the more specific tag (or the higher build tag) and never try the other.
struct Ambiguity {
  const IndexedWheel* taken = nullptr;  // what pip picks
  const IndexedWheel* hidden = nullptr;
  std::string environment;  // "CPython 3.12 on Linux x86_64"
};

// Every such pair among `wheels` (one entry per hidden wheel).
std::vector<Ambiguity> find_ambiguities(const std::vector<const IndexedWheel*>& wheels);

// One line for a user: which file hides which, for whom, and what to do instead.
std::string describe(const Ambiguity& ambiguity);

// A combined surface (the index's simple/ and find-links page, a release's assets, a registry
// after publish --local-labels) serves every CUDA build of torch from one namespace and cannot
// tell them apart: a requirement matches a local label only exactly (torch==2.11.0+cu128), never
// a range, and PyPI's torch carries no label. There a per-torch wheel of a torch that a universal
// wheel also serves would be taken by every build of that torch (its label sorts higher), though
// it loads only with torch's own CUDA major, while the universal wheel carries its CUDA runtime
// and loads with any. So a combined surface leaves such per-torch wheels out; the per-CUDA and
// per-variant indexes keep them (a per-CUDA index is this rule over one major's wheels:
// cuda_index_wheels).
struct LeftOut {
  const IndexedWheel* wheel = nullptr;      // a per-torch wheel
  const IndexedWheel* served_by = nullptr;  // a universal wheel that serves its torch
};
struct CombinedSurface {
  std::vector<const IndexedWheel*> wheels;  // in the order given
  std::vector<LeftOut> left_out;
};
CombinedSurface combined_surface(const std::vector<const IndexedWheel*>& wheels);

// One line for a user: the wheel left out, and which wheel its torch gets instead.
std::string describe(const LeftOut& left_out);

}  // namespace sagebuild::registry
