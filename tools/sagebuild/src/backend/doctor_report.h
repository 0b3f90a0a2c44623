// What `sagebuild doctor` reports, whichever backend examines the machine (BuildBackend::examine):
// checks of what was found, each with its fix, and whether each entry can build here.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

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

const char* health_name(Health h);  // "ok", "warning", "problem"

}  // namespace sagebuild::backend
