#include "backend/docker/docker_image.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "backend/native/entry_toolchain.h"
#include "util/glob.h"
#include "util/text.h"

namespace sagebuild::backend {

const char* docker_python_name(DockerPython python) {
  switch (python) {
    case DockerPython::uv:
      return "uv";
    case DockerPython::system:
      return "system";
    case DockerPython::image:
      return "image";
  }
  return "?";
}

Expected<const matrix::DockerImageSet*> docker_image_set(const matrix::Matrix& m,
                                                         std::string_view requested) {
  if (!m.docker || m.docker->sets.empty()) {
    return Error{"matrix.yaml has no docker.images: the Docker backend has no image to start from"};
  }
  std::string name(requested);
  std::string origin = "--images";
  if (name.empty()) {
    if (const char* env = std::getenv("SAGEBUILD_DOCKER_IMAGES"); env && *env) {
      name = env;
      origin = "SAGEBUILD_DOCKER_IMAGES";
    } else {
      name = m.docker->default_set;
      origin = "docker.default";
    }
  }
  if (const matrix::DockerImageSet* set = m.docker->find_set(name)) return set;
  std::vector<std::string> names;
  for (const auto& set : m.docker->sets)
    names.push_back(set.name);
  return Error{
      fmt::format("{} names no image set of matrix.yaml's docker.images: '{}'{} (there "
                  "are: {})",
                  origin, name, text::did_you_mean(name, names), text::join(names, ", "))};
}

Expected<DockerImage> docker_image_for(const matrix::Matrix& m, const matrix::Entry& e,
                                       const matrix::DockerImageSet& set) {
  const std::string cuda = e.cuda.str();
  const auto rule = std::find_if(set.rules.begin(), set.rules.end(),
                                 [&](const auto& r) { return glob::matches(r.cuda.value, cuda); });
  if (rule == set.rules.end()) {
    std::vector<std::string> patterns;
    for (const auto& r : set.rules)
      patterns.push_back(r.cuda.value);
    return Error{fmt::format(
        "no rule of docker.images.{} (matrix.yaml:{}) serves CUDA {} (its rules: {}): build it "
        "with another image set (--images) or add a rule",
        set.name, set.location.line, cuda, text::join(patterns, ", "))};
  }
  DockerImage image;
  const std::pair<std::string, std::string> values[] = {{"cuda_full", e.cuda_full}, {"cuda", cuda}};
  image.base = text::fill_placeholders(rule->base, values);
  image.toolkit = rule->toolkit;
  image.toolkit_suite = rule->toolkit_suite;
  if (image.toolkit == matrix::DockerToolkit::pypi) {
    const matrix::CudaToolkit* toolkit = m.find_cuda(e.cuda);
    if (!toolkit || toolkit->pypi.empty()) {
      return Error{
          fmt::format("docker.images.{} (matrix.yaml:{}) provisions CUDA {} from "
                      "PyPI, but matrix.yaml's cuda '{}' has no pypi requirement",
                      set.name, rule->location.line, cuda, cuda)};
    }
  }
  // The base image's own Python when the wheel can be built with it (any Python of its torch,
  // for a wheel that serves every Python), else the rule's other source.
  const std::vector<Version> candidates = candidate_pythons(m, e);
  if (rule->system_python &&
      std::find(candidates.begin(), candidates.end(), *rule->system_python) != candidates.end()) {
    image.python_source = DockerPython::system;
    image.python = *rule->system_python;
  } else if (rule->python == "uv") {
    image.python_source = DockerPython::uv;
    image.python = e.python;
  } else if (!rule->python.empty()) {
    image.python_source = DockerPython::image;
    const std::pair<std::string, std::string> python[] = {{"python", e.python.str()}};
    image.python_image = text::fill_placeholders(rule->python, python);
    image.python = e.python;
  } else {
    return Error{
        fmt::format("needs Python {}, but the base image of docker.images.{} "
                    "(matrix.yaml:{}) has Python {} and the rule names no other source "
                    "(python: uv or an image)",
                    e.python.str(), set.name, rule->location.line, rule->system_python->str())};
  }
  return image;
}

}  // namespace sagebuild::backend
