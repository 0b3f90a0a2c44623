// Where a Docker build of an entry starts: matrix.yaml's docker.images rule for the entry's
// toolkit, resolved into the build arguments of docker/Dockerfile.linux. One set serves GitHub's
// runners (NVIDIA's CUDA images, uv's Pythons), another a machine without Docker Hub (images that
// scripts/docker-engine.sh makes from Debian's archive); docs/build.md, "Docker builds".
#pragma once

#include <string>
#include <string_view>

#include "matrix/expand.h"
#include "matrix/model.h"
#include "util/expected.h"

namespace sagebuild::backend {

enum class DockerPython {
  uv,      // uv downloads the entry's Python
  system,  // the base image's python3
  image,   // an image holding the interpreter, laid over the base
};
const char* docker_python_name(DockerPython python);

struct DockerImage {
  std::string base;
  matrix::DockerToolkit toolkit = matrix::DockerToolkit::image;
  std::string toolkit_suite;  // matrix::DockerImageRule::toolkit_suite
  DockerPython python_source = DockerPython::uv;
  std::string python_image;  // DockerPython::image: the image; otherwise empty
  Version python;            // the interpreter the wheel is built with
};

// The set named by `requested`, else $SAGEBUILD_DOCKER_IMAGES, else docker.default. The error
// names the sets there are.
Expected<const matrix::DockerImageSet*> docker_image_set(const matrix::Matrix& m,
                                                         std::string_view requested);

// The first rule of `set` whose cuda pattern matches the entry's toolkit, resolved. An entry no
// rule serves, or whose Python or toolkit the rule cannot provide, is an error that says which
// (without the entry's id: callers name it).
Expected<DockerImage> docker_image_for(const matrix::Matrix& m, const matrix::Entry& e,
                                       const matrix::DockerImageSet& set);

}  // namespace sagebuild::backend
