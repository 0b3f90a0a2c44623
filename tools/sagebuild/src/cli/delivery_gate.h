// What publish and release do before anything leaves the machine (docs/build.md, "How pip and
// uv choose"): every wheel verified as verify-wheel verifies it (with matrix.yaml's entries when
// there is one), labelled with its variant's local version when asked, and the set refused when
// one environment could take two files of one version. Any failure: an error, nothing uploaded.
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "registry/delivery.h"
#include "util/fs.h"
#include "util/log.h"
#include "wheel/verify.h"

namespace sagebuild::cli {

struct GateOptions {
  bool verify = true;  // false: --no-verify
  // Deliver the wheels sagebuild built under their variants' local versions (others as they
  // are: they have no recorded variant).
  bool label = false;
  wheel::VerifyOptions checks;  // what verification holds each wheel to
  // --delivered-dir: a copy of every file as it will be delivered (labelled where labelling was
  // asked) goes here, so that attestations and checksums are made of the uploaded bytes.
  std::filesystem::path delivered_dir;
};

// The files to upload, in the order given: the labelled copies (in a temporary folder that
// lives as long as this) where labelling was asked, the inputs otherwise; non-wheel files as
// they are.
struct DeliverySet {
  std::vector<std::filesystem::path> files;
  std::vector<std::filesystem::path> sources;  // the input each of `files` is, or was made from
  std::vector<registry::IndexedWheel> wheels;  // the wheels among them, as delivered
  std::unique_ptr<fs::TempDir> labelled;
};

// Verifies every wheel among `files` as verify-wheel does; any failure: its findings on the log
// and CommandError (exit 5) saying `nothing_done` ("nothing uploaded").
void verify_before_delivery(const std::vector<std::filesystem::path>& files,
                            const wheel::VerifyOptions& checks, std::string_view nothing_done,
                            Log& log);

// Throws CommandError (verification failure: exit 5; a set that cannot resolve, a wheel that
// cannot be labelled, or a --delivered-dir that already holds another file of a name: exit 6).
// `out` gets one line per failed wheel's findings.
DeliverySet prepare_delivery(const std::vector<std::filesystem::path>& files,
                             const GateOptions& options, Log& log);

// After an upload: for each of `failed` (files of the set) that is a labelled copy, which input
// the user passed it was made from, with that file's sha256 and size: a refusal names the copy's
// digest, which no file of theirs has.
void name_sources_of_failures(const DeliverySet& set,
                              const std::vector<std::filesystem::path>& failed, Log& log);

// --dry-run's report: "would <verb> <name>" per file, then the count; nothing was sent.
void print_dry_run(const DeliverySet& set, std::string_view verb, Log& log);

}  // namespace sagebuild::cli
