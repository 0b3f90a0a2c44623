// The Docker backend: the entries built by one `docker buildx bake` (docker_build.h), its doctor
// section from docker_doctor.h.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace sagebuild::backend {

std::unique_ptr<BuildBackend> make_docker_backend();

}  // namespace sagebuild::backend
