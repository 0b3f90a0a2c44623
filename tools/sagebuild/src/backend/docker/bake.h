// Docker Bake file generation: replaces the hand-written docker-bake.hcl. The JSON form of the
// Bake file reference: {"group": {name: {"targets": [...]}}, "target": {name: {...}}}.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "matrix/expand.h"
#include "util/expected.h"

namespace sagebuild::backend {

struct BakeOptions {
  std::string dockerfile = "docker/Dockerfile.linux";
  std::string context = ".";
  std::string stage = "wheel";      // the Dockerfile stage whose files are the output
  std::string output_dir = "dist";  // local exporter destination
  // Each target exports into output_dir/<entry id>, so that a wheel is known by its entry
  // (sagebuild build --backend docker); off: all into output_dir (the seeds' layout).
  bool output_per_target = false;
  // The set of matrix.yaml's docker.images the targets start from; empty: docker_image_set's
  // default ($SAGEBUILD_DOCKER_IMAGES, then docker.default).
  std::string images;
  // A CA bundle handed to every target as the BuildKit secret "ca-bundle" (never a layer), for
  // builders behind a TLS-intercepting proxy; empty: none.
  std::string ca_bundle;
  // The environment variable whose value every target gets as the BuildKit secret
  // "ccache-remote" (ccache's remote storage inside the build: docker/with-build-secrets.sh),
  // read by buildx when it runs the file, so that the URL, which may carry a password, is never
  // written into it; empty: none.
  std::string compile_cache_remote_env;
  // A sagebuild executable in the context (a path relative to it, '/'-separated) that every
  // target uses instead of compiling its own: the build argument SAGEBUILD_PREBUILT; "": none.
  std::string prebuilt_sagebuild;
};

// The CA bundle this machine's TLS clients use: $SSL_CERT_FILE, else the system bundle when it
// exists, else none.
std::string host_ca_bundle();

// "CCACHE_REMOTE_STORAGE" when this environment configures ccache's remote storage, else "":
// builds in containers share the compile cache of native ones (docs/build.md).
std::string host_compile_cache_remote_env();

struct BakeGroup {
  std::string name;  // a profile name
  std::vector<matrix::Entry> entries;
};

// One target per distinct entry (entries that Docker cannot build, i.e. Windows, are left out),
// one group per profile, and "default": the profile named "default" if present, else the first.
// Each target's build arguments are its entry's image (backend/docker/docker_image.h); an entry the
// image set cannot build is an error naming every such entry.
Expected<nlohmann::ordered_json> make_bake_file(const matrix::Matrix& m,
                                                const std::vector<BakeGroup>& groups,
                                                const BakeOptions& options);

// The command that builds `targets` of the Bake file at `file`: what `sagebuild build
// --backend docker` runs (and --dry-run prints). `set` adds --set overrides (target.key=value).
std::vector<std::string> bake_command(const std::string& file,
                                      const std::vector<std::string>& targets,
                                      const std::vector<std::string>& set = {});

}  // namespace sagebuild::backend
