#include "matrix/model.h"

namespace sagebuild::matrix {

const char* axis_name(Axis axis) {
  switch (axis) {
    case Axis::torch:
      return "torch";
    case Axis::cuda:
      return "cuda";
    case Axis::python:
      return "python";
    case Axis::platform:
      return "platform";
    case Axis::abi:
      return "abi";
  }
  return "?";
}

const char* abi_name(Abi abi) {
  switch (abi) {
    case Abi::per_torch:
      return "per-torch";
    case Abi::per_torch_py3:
      return "per-torch-py3";
    case Abi::stable:
      return "stable";
  }
  return "?";
}

const char* docker_toolkit_name(DockerToolkit toolkit) {
  switch (toolkit) {
    case DockerToolkit::image:
      return "image";
    case DockerToolkit::pypi:
      return "pypi";
    case DockerToolkit::debian:
      return "debian";
  }
  return "?";
}

const DockerImageSet* DockerSettings::find_set(std::string_view name) const {
  for (const DockerImageSet& s : sets) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const Profile* Matrix::find_profile(std::string_view name) const {
  for (const Profile& p : profiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const TorchRelease* Matrix::find_torch(const Version& version) const {
  for (const TorchRelease& t : torch) {
    if (t.version == version) return &t;
  }
  return nullptr;
}

const CudaToolkit* Matrix::find_cuda(const Version& version) const {
  for (const CudaToolkit& t : cuda) {
    if (t.version == version) return &t;
  }
  return nullptr;
}

const ArchSpec* Matrix::find_arch(std::string_view name) const {
  if (name.ends_with("+PTX")) {
    name.remove_suffix(4);
  }
  for (const ArchSpec& a : architectures) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const Platform* Matrix::find_platform(std::string_view name) const {
  for (const Platform& p : platforms) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> Matrix::profile_names() const {
  std::vector<std::string> names;
  for (const Profile& p : profiles)
    names.push_back(p.name);
  return names;
}

std::vector<std::string> Matrix::platform_names() const {
  std::vector<std::string> names;
  for (const Platform& p : platforms)
    names.push_back(p.name);
  return names;
}

}  // namespace sagebuild::matrix
