// `sagebuild doctor`: what this machine can build of the selected entries and why not, each
// problem with its fix. It looks where the build looks (entry_toolchain.h) and tries what the
// build would try first: the Pythons, the CUDA toolkits and their nvcc, the host compiler with
// each toolkit (a one-line kernel compiled for real), the torch environments in the cache, Docker
// and the disk and memory the planned build needs (Docker's checks: docker/docker_doctor.h). It
// builds, installs and provisions nothing.
#pragma once

#include <string>
#include <vector>

#include "backend/build_options.h"
#include "backend/doctor_report.h"
#include "matrix/expand.h"
#include "matrix/model.h"

namespace sagebuild::backend {

// The native backend's examination (BuildBackend::examine).
DoctorReport examine_native(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                            const BuildOptions& options);

}  // namespace sagebuild::backend
