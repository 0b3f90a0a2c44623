// `sagebuild doctor`: what this machine can build of the selected entries and why not, each
// problem with its fix. It looks where the build looks (entry_toolchain.h) and tries what the
// build would try first: the Pythons, the CUDA toolkits and their nvcc, the host compiler with
// each toolkit (a one-line kernel compiled for real), the torch environments in the cache, Docker
// and buildx for --backend docker, and the disk and memory the planned build needs. It builds,
// installs and provisions nothing.
#pragma once

#include <string>
#include <vector>

#include "backend/build_options.h"
#include "matrix/expand.h"
#include "matrix/model.h"

namespace sagebuild::backend {

enum class Health { ok, warning, problem };

struct DoctorCheck {
  std::string area;     // "python", "cuda", "host-compiler", "torch", "docker", "disk", "memory"
  std::string subject;  // "Python 3.12", "CUDA 12.9", "g++ with CUDA 13.0"
  Health health = Health::ok;
  std::string detail = {};  // what was found
  std::string fix = {};     // what to do (warnings and problems)
};

struct EntryReadiness {
  std::string id;
  bool ready = false;
  std::string reason;  // why not
};

struct DoctorReport {
  std::vector<DoctorCheck> checks;
  std::vector<EntryReadiness> entries;
  std::size_t ready() const;
};

DoctorReport examine_machine(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                             const BuildOptions& options);

const char* health_name(Health h);  // "ok", "warning", "problem"

}  // namespace sagebuild::backend
