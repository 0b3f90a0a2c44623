// Finding interpreters and CUDA toolkits, against fake ones made in a temporary directory: scripts
// that answer `--version` (nvcc) and the version query (python) like the real programs.
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "matrix/model.h"
#include "test_support.h"
#include "toolchain/cuda.h"
#include "toolchain/python.h"
#include "util/fs.h"

namespace sagebuild::toolchain {
namespace {

namespace stdfs = std::filesystem;

// A fake tool (interpreter, nvcc) as a shell script: tests that run one are tagged
// [posix-tools], left out of the Windows build's run under Wine (scripts/windows-test.sh).
void write_script(const stdfs::path& path, const std::string& body) {
  stdfs::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  stdfs::permissions(path, stdfs::perms::owner_all);
}

// A toolkit root whose nvcc says it is `version` ("12.6.85").
stdfs::path fake_toolkit(const stdfs::path& root, const std::string& version) {
  const std::string release = version.substr(0, version.rfind('.'));
  write_script(root / "bin" / "nvcc",
               "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
               "echo 'Cuda compilation tools, release " +
                   release + ", V" + version + "'");
  return root;
}

using testing::ScopedEnv;

matrix::CudaToolkit toolkit(const std::string& release, std::string pypi = "") {
  matrix::CudaToolkit t;
  t.version = *Version::parse(release);
  t.full_version = release + ".0";
  t.pypi = std::move(pypi);
  return t;
}

TEST_CASE("pyenv's newest patch release of a Python is found, else a clear error", "[toolchain]") {
  fs::TempDir dir("sagebuild-pyenv");
  for (const char* v : {"3.12.9", "3.12.10", "3.11.7"}) {
    write_script(dir.path() / "versions" / v / "bin" / ("python" + std::string(v).substr(0, 4)),
                 "echo " + std::string(v).substr(0, 4));
  }
  const ScopedEnv pyenv("PYENV_ROOT", dir.path().string());
  const ScopedEnv path("PATH", "/nonexistent");
  auto found = find_python("3.12");
  REQUIRE(found);
  CHECK(found->parent_path().parent_path().filename() == "3.12.10");  // not 3.12.9
  auto missing = find_python("3.9");
  REQUIRE_FALSE(missing);
  CHECK(
      missing.error().message.starts_with("no Python 3.9 here: looked in matrix.yaml "
                                          "toolchains.python, pyenv ("));
  CHECK(missing.error().message.find("pyenv install 3.9") != std::string::npos);
}

TEST_CASE("a configured interpreter must be the Python it is configured as",
          "[toolchain][posix-tools]") {
  fs::TempDir dir("sagebuild-python");
  write_script(dir.path() / "python", "echo 3.11");
  matrix::Toolchains configured;
  configured.python.push_back(
      {*Version::parse("3.12"), {(dir.path() / "python").string(), {7, 11, 1}}});
  auto wrong = find_python("3.12", configured);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message == "matrix.yaml:7:11: toolchains.python '3.12' is " +
                                     (dir.path() / "python").string() + ", which is Python 3.11");
  configured.python[0].second.value = (dir.path() / "missing").string();
  auto missing = find_python("3.12", configured);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.ends_with("which does not run"));
}

TEST_CASE("CUDA toolkits: named paths must match, usual places are skipped when they do not",
          "[toolchain][posix-tools]") {
  fs::TempDir dir("sagebuild-cuda");
  const stdfs::path cuda126 = fake_toolkit(dir.path() / "cuda-12.6", "12.6.85");
  const stdfs::path cuda124 = fake_toolkit(dir.path() / "cuda-12.4", "12.4.131");
  const ScopedEnv path("PATH", "/usr/bin:/bin");
  const ScopedEnv unset_path("CUDA_PATH", "");

  CudaSearch search;
  search.given.push_back({*Version::parse("12.6"), cuda126});
  auto given = find_cuda(toolkit("12.6"), search);
  REQUIRE(given);
  CHECK(given->version == "12.6.85");
  CHECK(given->root == cuda126);

  // A wrong nvcc where the user pointed is an error, not a fallback.
  search.given = {{*Version::parse("12.6"), cuda124}};
  auto wrong = find_cuda(toolkit("12.6"), search);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message ==
        "--cuda-path names " + cuda124.string() +
            " for CUDA 12.6, but its nvcc is 12.4.131: wrong nvcc version");

  // $CUDA_HOME of another release is passed over; the error lists what was seen.
  search.given.clear();
  const ScopedEnv home("CUDA_HOME", cuda124.string());
  if (!stdfs::exists("/usr/local/cuda-12.6")) {
    auto none = find_cuda(toolkit("12.6"), search);
    REQUIRE_FALSE(none);
    const std::string& m = none.error().message;
    CHECK(
        m.starts_with("no CUDA 12.6 toolkit: $CUDA_HOME " + cuda124.string() + ": nvcc 12.4.131"));
    CHECK(m.find("/usr/local/cuda-12.6: absent") != std::string::npos);
    CHECK(m.find("provisioning is off") != std::string::npos);
    CHECK(m.find("--cuda-path 12.6=DIR") != std::string::npos);
  }
  const ScopedEnv home126("CUDA_HOME", cuda126.string());
  auto from_home = find_cuda(toolkit("12.6"), search);
  REQUIRE(from_home);
  CHECK(from_home->origin == "$CUDA_HOME " + cuda126.string());
}

TEST_CASE("a toolkit without a pypi requirement is not provisioned; a dry run installs nothing",
          "[toolchain]") {
  fs::TempDir dir("sagebuild-cuda-cache");
  const ScopedEnv path("PATH", "/usr/bin:/bin");
  const ScopedEnv home("CUDA_HOME", (dir.path() / "none").string());
  CudaSearch search;
  search.cache = dir.path();
  if (stdfs::exists("/usr/local/cuda-11.8") || stdfs::exists("/usr/local/cuda-99.0")) return;
  auto none = find_cuda(toolkit("11.8"), search);
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("matrix.yaml gives CUDA 11.8 no `pypi` requirement") !=
        std::string::npos);
  search.provision = false;
  auto dry = find_cuda(toolkit("99.0", "cuda-toolkit[nvcc]==99.0.0"), search);
  REQUIRE_FALSE(dry);
  CHECK(dry.error().message.find(
            "it would be provisioned from PyPI (cuda-toolkit[nvcc]==99.0.0)") != std::string::npos);
  CHECK_FALSE(stdfs::exists(dir.path() / "cuda" / "99.0"));
}

TEST_CASE("a toolkit provisioned earlier is found in the cache", "[toolchain][posix-tools]") {
  fs::TempDir dir("sagebuild-cuda-cached");
  const ScopedEnv path("PATH", "/usr/bin:/bin");
  const ScopedEnv home("CUDA_HOME", (dir.path() / "none").string());
  // NVIDIA's wheel layout: <target>/nvidia/cu13/{bin,lib}
  const stdfs::path root = dir.path() / "cuda" / "98.1" / "toolkit" / "nvidia" / "cu98";
  fake_toolkit(root, "98.1.7");
  stdfs::create_directories(root / "lib");
  std::ofstream(root / "lib" / "libcudart.so.98") << "";
  CudaSearch search;
  search.cache = dir.path();
  auto found = find_cuda(toolkit("98.1"), search);
  REQUIRE(found);
  CHECK(found->root == root);
  CHECK(found->origin.ends_with("(provisioned from PyPI)"));
  // FindCUDAToolkit looks for the unversioned name; nvcc.profile links from lib64.
  CHECK(stdfs::is_symlink(root / "lib" / "libcudart.so"));
  CHECK(stdfs::is_symlink(root / "lib64"));
  CHECK(stdfs::exists(root / "lib64" / "libcudart.so.98"));
}

TEST_CASE("the toolkit of --cuda-path X.Y=pypi is the provisioned one, not the machine's own",
          "[toolchain][posix-tools]") {
  fs::TempDir dir("sagebuild-cuda-pypi");
  const stdfs::path own = fake_toolkit(dir.path() / "own", "98.1.2");
  const ScopedEnv path("PATH", "/usr/bin:/bin");
  const ScopedEnv home("CUDA_HOME", own.string());
  CudaSearch search;
  search.cache = dir.path();
  auto machine = find_cuda(toolkit("98.1"), search);
  REQUIRE(machine);
  CHECK(machine->root == own);

  const stdfs::path provisioned = dir.path() / "cuda" / "98.1" / "toolkit" / "nvidia" / "cu98";
  fake_toolkit(provisioned, "98.1.7");
  stdfs::create_directories(provisioned / "lib");
  search.given = {{*Version::parse("98.1"), kPypiToolkit}};
  auto pypi = find_cuda(toolkit("98.1"), search);
  REQUIRE(pypi);
  CHECK(pypi->root == provisioned);
  CHECK(pypi->version == "98.1.7");

  // Without a cache there is nowhere to provision to: said as such, not the machine's toolkit.
  search.cache.clear();
  auto off = find_cuda(toolkit("98.1"), search);
  REQUIRE_FALSE(off);
  CHECK(off.error().message == "--cuda-path 98.1=pypi: provisioning is off (--no-cache)");
}

}  // namespace
}  // namespace sagebuild::toolchain
