// The build backends, one row each (registry.cpp): the name `--backend` takes, what it is, how
// it is made and how it tells whether it can run here. The only place that names a backend:
// commands ask here for the list, the backend of a name, and the backend of a build.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace sagebuild::backend {

struct BackendRow {
  const char* name;
  const char* summary;  // one line, for --help and the docs
  // Whether --backend selects it (the MSVC backend is chosen by the entries, not by name).
  bool selectable;
  std::unique_ptr<BuildBackend> (*make)();
  // For another backend's doctor report: one line on whether it could run on this machine, or
  // nothing where its tool is not even installed. nullptr: it needs nothing beyond the native
  // build's checks.
  std::optional<DoctorCheck> (*availability)() = nullptr;
};

std::span<const BackendRow> backend_rows();

// The names --backend takes, for the option's check and help.
std::vector<std::string> selectable_backend_names();
// "native or docker"
std::string selectable_backend_list();

// options.backend's backend; for the native one, the MSVC backend when every entry is a Windows
// entry (what a Linux host can do for them is the plan). An unknown name is the caller's bug:
// the option's check takes only selectable names.
std::unique_ptr<BuildBackend> make_backend(const BuildOptions& options,
                                           const std::vector<matrix::Entry>& entries);

// The doctor report of options.backend, with one line from each other backend that can tell
// whether it could run here.
DoctorReport examine_backends(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                              const BuildOptions& options);

}  // namespace sagebuild::backend
