#include "backend/profile_build.h"

#include <catch2/catch.hpp>

#include "backend/kernel_cache.h"
#include "util/fs.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;

TEST_CASE("the build budget bounds compile processes by cores and memory", "[build]") {
  // 2 cores, plenty of memory, one entry: both cores for it.
  BuildBudget b = plan_budget(1, 3, 2, 22.0, 6, 5);
  CHECK(b.jobs == 1);
  CHECK(b.parallel == 2);
  CHECK(b.nvcc_threads == 1);
  // 4 entries at once on 16 cores: 4 compile jobs each.
  b = plan_budget(4, 10, 16, 64.0, 6, 5);
  CHECK(b.jobs == 4);
  CHECK(b.parallel == 4);
  // Memory binds: 6 GB allows 4 processes whatever the cores.
  b = plan_budget(2, 10, 32, 6.0, 6, 5);
  CHECK(b.parallel == 2);
  // More jobs than entries: no idle workers.
  b = plan_budget(8, 2, 64, 256.0, 6, 5);
  CHECK(b.jobs == 2);
  CHECK(b.parallel == 32);
  // A share larger than the number of kernel files goes to nvcc --threads (at most the archs).
  CHECK(b.nvcc_threads == 5);
  CHECK(b.why.find("2 entries at once, 32 compile jobs each, nvcc --threads 5") == 0);
  // Never zero, even on a tiny machine.
  b = plan_budget(1, 1, 1, 0.5, 0, 0);
  CHECK(b.parallel == 1);
  CHECK(b.nvcc_threads == 1);
}

TEST_CASE("the kernel cache key follows the kernel sources, archs and toolkit", "[build]") {
  fs::TempDir dir("sagebuild-kernelkey");
  const stdfs::path root = dir.path();
  stdfs::create_directories(root / "kernels" / "src");
  stdfs::create_directories(root / "kernels" / "tests");
  (void)fs::write_file_atomic(root / "CMakeLists.txt", "project(x)\n");
  (void)fs::write_file_atomic(root / "kernels" / "CMakeLists.txt", "add_library(k a.cu)\n");
  (void)fs::write_file_atomic(root / "kernels" / "src" / "a.cu", "__global__ void a() {}\n");
  (void)fs::write_file_atomic(root / "kernels" / "tests" / "t.py", "print(1)\n");
  toolchain::CudaToolkitPath cuda{"/nonexistent", "/nonexistent/bin/nvcc", *Version::parse("13.0"),
                                  "13.0.88", ""};
  KernelInputs in{root, cuda, {"8.0", "9.0a"}, {}};
  CHECK(kernel_sources(root) ==
        std::vector<stdfs::path>{"CMakeLists.txt", "kernels/CMakeLists.txt", "kernels/src/a.cu"});
  auto base = kernel_key(in);
  REQUIRE(base);
  CHECK(base->name.starts_with("cuda13.0-"));
  CHECK(base->name.size() == std::string("cuda13.0-").size() + 16);
  CHECK(kernel_key(in)->name == base->name);  // deterministic

  // Tests and docs beside the kernels do not change it.
  (void)fs::write_file_atomic(root / "kernels" / "tests" / "t.py", "print(2)\n");
  CHECK(kernel_key(in)->name == base->name);
  // A source, the archs, the defines and the toolkit do.
  (void)fs::write_file_atomic(root / "kernels" / "src" / "a.cu", "__global__ void a() { }\n");
  auto edited = kernel_key(in);
  CHECK(edited->name != base->name);
  KernelInputs archs = in;
  archs.archs = {"8.0"};
  CHECK(kernel_key(archs)->name != edited->name);
  KernelInputs defines = in;
  defines.defines = {"SAGEATTN_LINEINFO=OFF"};
  CHECK(kernel_key(defines)->name != edited->name);
  KernelInputs other_cuda = in;
  other_cuda.cuda.version = "13.0.89";
  CHECK(kernel_key(other_cuda)->name != edited->name);
  CHECK(edited->json.find("\"kernels/src/a.cu\"") != std::string::npos);
}

TEST_CASE("the results table names each entry's outcome", "[build]") {
  std::vector<EntryResult> results(2);
  results[0].id = "linux-a";
  results[0].status = "built";
  results[0].wheel = "dist/a-1-cp312-cp312-linux_x86_64.whl";
  results[0].seconds = 12.5;
  results[1].id = "linux-b";
  results[1].status = "build_failed";
  results[1].message = "no Python 3.9 here: looked in …\nsecond line";
  const std::string table = format_results(results);
  CHECK(table.find("linux-a") != std::string::npos);
  CHECK(table.find("a-1-cp312-cp312-linux_x86_64.whl") != std::string::npos);
  CHECK(table.find("build_failed") != std::string::npos);
  CHECK(table.find("no Python 3.9 here") != std::string::npos);
  CHECK(table.find("second line") == std::string::npos);
}

}  // namespace
}  // namespace sagebuild::backend
