// The in-memory form of matrix.yaml. Everything a profile can select is here; nothing in this
// file knows YAML (loader.cpp) or how entries are expanded (expand.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "matrix/diagnostics.h"
#include "util/version.h"

namespace sagebuild::matrix {

template <typename T>
struct Located {
  T value;
  SourceLocation location;
};

// Where the package version lives: the first capture group of `regex` in `file`
// (relative to the directory of matrix.yaml).
// What builds that are not of a release tag are called (package.version.untagged):
//   release    the file's version as it is (the seeds' behaviour)
//   dev        X.Y.Z.devN, N = commits since the nearest release tag
//   dev-local  X.Y.Z.devN+g<commit>: for registries that accept local labels (not PyPI's)
enum class UntaggedVersion { release, dev, dev_local };

struct VersionSource {
  std::string file;
  std::string regex;
  std::string tag_prefix = "v";  // release tags are <prefix><version>: v2.2.0
  UntaggedVersion untagged = UntaggedVersion::release;
  SourceLocation location = {};
};

// A compiled part of the package that sagebuild builds once, in its cache, and hands to every
// wheel build that can share it (package.kernels, package.binding): the repository's CMake
// project configured with `cmake` settings and installed into a prefix.
struct NativePart {
  // The files that decide the part (globs relative to matrix.yaml's directory; "**" spans
  // directories), less `exclude`: the cache key is made from their contents.
  std::vector<std::string> sources;
  std::vector<std::string> exclude;
  // -D settings of its CMake configuration; values may use {archs} (the entry's architectures,
  // ';'-separated), {abi} and {torch} (the binding's ABI and the torch it is built against).
  std::vector<std::pair<std::string, std::string>> cmake;
  // The CMake variable through which the wheel build takes what was built: the install prefix
  // for the kernels, `library` inside it for the binding.
  std::string handoff;
  std::string library;  // binding only: the built library, relative to the install prefix
  // SKBUILD_CMAKE_DEFINE settings of the user's that change this part (glob on the name, e.g.
  // "SAGEATTN_*"): they join its configuration and its cache key.
  std::string user_settings;
  SourceLocation location;
};

struct PackageSpec {
  std::string name;
  VersionSource version;
  std::string source_dir;
  std::vector<std::string> build_command;  // {python}, {wheel_dir}, {source_dir} are substituted
  // Environment variables of the build command (and of the binding's own build), with the
  // placeholders {torch_requirement}, {abi}, {torch} and {archs} filled in per entry.
  std::vector<std::pair<std::string, std::string>> build_environment;
  // Python run after `import <package>` in the install check (I001), to prove more than that
  // the module imports: that its compiled library loaded, say. Empty: the import alone.
  std::string import_check;
  // Built once and shared when declared; without them the build command compiles everything.
  std::optional<NativePart> kernels;
  std::optional<NativePart> binding;
  // What the build command needs in the entry's environment besides torch (pyproject.toml's
  // [build-system] requires: builds run without isolation so that they see the entry's torch).
  std::vector<std::string> build_requires;
  std::string entry_id_template;  // fmt named fields, see expand.h
  SourceLocation entry_id_location;
  std::string entry_id_stable_template;  // the same for stable-ABI entries (no Python in them)
  SourceLocation entry_id_stable_location;
};

// A CUDA architecture as TORCH_CUDA_ARCH_LIST spells it ("8.0", "9.0a", "12.0"), and the
// toolkits that can compile for it.
struct ArchSpec {
  std::string name;
  VersionConstraint cuda;
  SourceLocation location;
};

struct CudaToolkit {
  Version version;           // "12.9": what build tags and ids use
  std::string full_version;  // "12.9.1": what installers and base images use
  std::optional<std::vector<Located<std::string>>> archs;  // overrides default_archs
  // A pip requirement that installs this toolkit, nvcc included, from PyPI (NVIDIA's toolkit
  // wheels), so that an entry builds on a host without it. Empty: it cannot be had that way.
  std::string pypi;
  SourceLocation location;
};

// Where this project's machines keep interpreters and toolkits, when not in the usual places
// (pyenv, PATH, /usr/local/cuda-X.Y). Keys are major.minor versions; paths may start with "~/".
struct Toolchains {
  std::vector<std::pair<Version, Located<std::string>>> python;  // -> an interpreter
  std::vector<std::pair<Version, Located<std::string>>> cuda;    // -> a toolkit root (bin/nvcc)
};

struct TorchRelease {
  Version version;
  std::vector<Located<Version>> cuda;    // toolkits this release was published for
  std::vector<Located<Version>> python;  // interpreters this release was published for
  SourceLocation location;
};

// stable_abi: the torch release the stable-ABI binding is built against (TORCH_TARGET_VERSION):
// its wheels load in that torch and every later one.
// `extra_cuda`: toolkits the stable binding is also built with, beyond those a torch release from
// the target on was published for (an older CUDA 12 serves older drivers).
struct StableAbi {
  Version target;
  std::vector<Located<Version>> extra_cuda;
  SourceLocation location;
};

// docker.images: where a Docker build of an entry starts (docker/Dockerfile.linux). A set is a
// list of rules; an entry takes the first whose `cuda` pattern matches its toolkit.
enum class DockerToolkit {
  image,   // the base image has it (NVIDIA's CUDA images)
  pypi,    // sagebuild provisions it from the toolkit's `pypi` requirement, as natively
  debian,  // Debian's nvidia-cuda-toolkit (non-free), installed into the image
};
const char* docker_toolkit_name(DockerToolkit toolkit);

struct DockerImageRule {
  Located<std::string> cuda;  // a glob of CUDA versions: "13.*", "12.4", "*"
  std::string base;           // the image; {cuda_full} and {cuda} are the entry's
  DockerToolkit toolkit = DockerToolkit::image;
  // toolkit debian: the Debian suite whose nvidia-cuda-toolkit is unpacked onto the base (its
  // files only: the base keeps its own glibc, compiler and C++ runtime, which the wheel links
  // against); empty: installed from the base's own suite.
  std::string toolkit_suite;
  // The entry's interpreter: "uv" (downloaded by uv), or an image holding an interpreter that is
  // laid over the base ({python} is the entry's), or empty: only the base image's python3.
  std::string python;
  std::optional<Version> system_python;  // the base image's python3, taken when the entry can
  SourceLocation location;
};

struct DockerImageSet {
  std::string name;
  std::vector<DockerImageRule> rules;
  SourceLocation location;
};

struct DockerSettings {
  std::string default_set;  // the set a build uses unless --images or SAGEBUILD_DOCKER_IMAGES
  std::vector<DockerImageSet> sets;
  SourceLocation location;
  const DockerImageSet* find_set(std::string_view name) const;
};

struct Platform {
  std::string name;  // "linux": used in ids and --platform
  std::string tag;   // PEP 425 platform tag: "manylinux_2_28_x86_64", "win_amd64"
  // The tag a wheel keeps when its binaries miss the manylinux policy `tag` names (the build says
  // which library or symbol kept it there); empty: such a wheel fails verification.
  std::string fallback_tag;
  std::string os;               // "linux" or "windows": picks the build backend
  std::string runner;           // GitHub Actions runs-on label
  std::string docker_platform;  // "linux/amd64" when Docker Bake can build it, else empty
  SourceLocation location;
};

enum class Axis { torch, cuda, python, platform, abi };
const char* axis_name(Axis axis);

// How the torch binding meets torch (docs/build.md, "Universal wheels"):
//   per_torch      through one torch release's C++ API: a wheel per Python x torch x CUDA,
//                  pinned to that torch minor release (cp312-cp312: the seeds' names)
//   per_torch_py3  the same binding (it includes no Python header) in one py3-none wheel per
//                  torch x CUDA that every Python of that torch takes, pinned the same way.
//                  Opt-in: only rules that name it (abi: per-torch-py3) select it
//   stable         through torch's stable C ABI, built against stable_abi.target: one py3-none
//                  wheel per CUDA toolkit that loads in that torch and every later one
enum class Abi { per_torch, per_torch_py3, stable };
// "per-torch", "per-torch-py3", "stable": the values of the abi axis.
const char* abi_name(Abi abi);
// One py3-none wheel serves every Python: off the python axis, built with any Python it has.
inline bool every_python(Abi abi) {
  return abi != Abi::per_torch;
}
// The binding the wheel holds, "per-torch" or "stable" (per-torch-py3 holds the per-torch one):
// the {abi} of build_environment and the parts' CMake settings, and the binding cache's key.
inline const char* binding_abi_name(Abi abi) {
  return abi == Abi::stable ? "stable" : "per-torch";
}

// One include/exclude rule: every named axis must match one of its glob patterns.
struct Selector {
  struct Field {
    Axis axis;
    std::vector<Located<std::string>> patterns;
  };
  std::vector<Field> fields;
  SourceLocation location;
};

struct Profile {
  std::string name;
  std::string description;
  std::vector<Located<std::string>> from;        // base selection; empty: every combination
  std::optional<std::vector<Selector>> include;  // keep entries matching any rule
  std::vector<Selector> exclude;                 // then drop entries matching any rule
  std::vector<Located<std::string>> platforms;   // restrict to these platforms
  std::vector<Located<Axis>> latest;             // keep only the newest value of each axis
  std::optional<std::vector<Located<std::string>>> archs;  // overrides the toolkit's archs
  SourceLocation location;
};

struct Matrix {
  int schema = 1;
  PackageSpec package;
  std::vector<ArchSpec> architectures;
  std::vector<Located<std::string>> default_archs;
  std::vector<CudaToolkit> cuda;
  std::vector<TorchRelease> torch;
  std::vector<Platform> platforms;
  std::vector<Profile> profiles;
  Toolchains toolchains;
  std::optional<StableAbi> stable_abi;   // none: every entry is per-torch
  std::optional<DockerSettings> docker;  // none: the Docker backend has no images to start from

  const Profile* find_profile(std::string_view name) const;
  const CudaToolkit* find_cuda(const Version& version) const;
  const ArchSpec* find_arch(std::string_view name) const;  // accepts a "+PTX" suffix
  const Platform* find_platform(std::string_view name) const;
  const TorchRelease* find_torch(const Version& version) const;
  std::vector<std::string> profile_names() const;
  std::vector<std::string> platform_names() const;
};

}  // namespace sagebuild::matrix
