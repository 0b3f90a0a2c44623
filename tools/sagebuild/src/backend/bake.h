// Docker Bake file generation: replaces the hand-written docker-bake.hcl. The JSON form of the
// Bake file reference: {"group": {name: {"targets": [...]}}, "target": {name: {...}}}.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "matrix/expand.h"

namespace sagebuild::backend {

struct BakeOptions {
  std::string dockerfile = "docker/Dockerfile.linux";
  std::string context = ".";
  std::string stage = "wheel";      // the Dockerfile stage whose files are the output
  std::string output_dir = "dist";  // local exporter destination
};

struct BakeGroup {
  std::string name;  // a profile name
  std::vector<matrix::Entry> entries;
};

// One target per distinct entry (entries that Docker cannot build, i.e. Windows, are left out),
// one group per profile, and "default": the profile named "default" if present, else the first.
nlohmann::ordered_json make_bake_file(const std::vector<BakeGroup>& groups,
                                      const BakeOptions& options);

}  // namespace sagebuild::backend
