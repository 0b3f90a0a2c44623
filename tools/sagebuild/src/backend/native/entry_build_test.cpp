#include <tuple>

#include <catch2/catch.hpp>

#include "backend/build_options.h"
#include "backend/build_results.h"
#include "backend/cache/kernel_cache.h"
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

matrix::NativePart kernels_part() {
  matrix::NativePart part;
  part.sources = {"CMakeLists.txt", "kernels/CMakeLists.txt", "kernels/src/**"};
  part.exclude = {"**/*_test.cpp"};
  part.cmake = {{"KERNEL_ARCHS", "{archs}"}};
  part.handoff = "KERNELS_PREBUILT";
  return part;
}

TEST_CASE("the kernel cache key follows the declared sources, archs and toolkit", "[build]") {
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
  (void)fs::write_file_atomic(root / "kernels" / "src" / "a_test.cpp", "int main() {}\n");
  KernelInputs in{root, kernels_part(), cuda, {"8.0", "9.0a"}, {}};
  CHECK(part_sources(root, in.part) ==
        std::vector<std::string>{"CMakeLists.txt", "kernels/CMakeLists.txt", "kernels/src/a.cu"});
  auto base = kernel_key(in);
  REQUIRE(base);
  CHECK(base->name.starts_with("cuda13.0-"));
  CHECK(base->name.size() == std::string("cuda13.0-").size() + 16);
  CHECK(kernel_key(in)->name == base->name);  // deterministic

  // Tests and docs beside the kernels do not change it, nor do excluded tests among them.
  (void)fs::write_file_atomic(root / "kernels" / "tests" / "t.py", "print(2)\n");
  (void)fs::write_file_atomic(root / "kernels" / "src" / "a_test.cpp", "int main() { }\n");
  CHECK(kernel_key(in)->name == base->name);
  // A source, the archs, the defines and the toolkit do.
  (void)fs::write_file_atomic(root / "kernels" / "src" / "a.cu", "__global__ void a() { }\n");
  auto edited = kernel_key(in);
  CHECK(edited->name != base->name);
  KernelInputs archs = in;
  archs.archs = {"8.0"};
  CHECK(kernel_key(archs)->name != edited->name);
  KernelInputs defines = in;
  defines.user_settings = {"SAGEATTN_LINEINFO=OFF"};
  CHECK(kernel_key(defines)->name != edited->name);
  KernelInputs settings = in;
  settings.part.cmake.push_back({"KERNEL_FLAG", "ON"});
  CHECK(kernel_key(settings)->name != edited->name);
  KernelInputs other_cuda = in;
  other_cuda.cuda.version = "13.0.89";
  CHECK(kernel_key(other_cuda)->name != edited->name);
  // The same sources in another checkout: nvcc's symbol names follow the path.
  fs::TempDir other("sagebuild-kernelkey-copy");
  stdfs::copy(root, other.path() / "checkout", stdfs::copy_options::recursive);
  KernelInputs elsewhere = in;
  elsewhere.root = other.path() / "checkout";
  CHECK(kernel_key(elsewhere)->name != edited->name);
  CHECK(edited->json.find("\"kernels/src/a.cu\"") != std::string::npos);
  CHECK(edited->json.find("\"KERNEL_ARCHS=8.0;9.0a\"") != std::string::npos);
  // Sources that match nothing are a mistake in matrix.yaml, said as such.
  KernelInputs nothing = in;
  nothing.part.sources = {"missing/**"};
  REQUIRE_FALSE(kernel_key(nothing));
  CHECK(kernel_key(nothing).error().message.find(
            "package.kernels's sources (matrix.yaml) match no file") == 0);
}

TEST_CASE("the results table names each entry's outcome", "[build]") {
  std::vector<EntryResult> results(2);
  results[0].id = "linux-a";
  results[0].outcome = EntryOutcome::built;
  results[0].wheel = "dist/a-1-cp312-cp312-linux_x86_64.whl";
  results[0].seconds = 12.5;
  results[1].id = "linux-b";
  results[1].outcome = EntryOutcome::build_failed;
  results[1].message = "no Python 3.9 here: looked in …\nsecond line";
  const std::string table = format_results(results);
  CHECK(table.find("linux-a") != std::string::npos);
  CHECK(table.find("a-1-cp312-cp312-linux_x86_64.whl") != std::string::npos);
  CHECK(table.find("build_failed") != std::string::npos);
  CHECK(table.find("no Python 3.9 here (above)\n") != std::string::npos);
  CHECK(table.find("looked in") == std::string::npos);
  CHECK(table.find("second line") == std::string::npos);
}

TEST_CASE("a failure's reason is given once in full; the table refers to it", "[build]") {
  // The progress line carries the whole reason; the table cell is its first clause.
  const std::string long_reason =
      "no CUDA 12.9 toolkit: $CUDA_HOME /usr/local/cuda: nvcc 13.0.88; /usr/local/cuda-12.9: "
      "absent; cache /root/.cache/sagebuild/cuda/12.9/toolkit: absent. Install it";
  CHECK(short_reason(long_reason) == "no CUDA 12.9 toolkit");
  CHECK(short_reason("interrupted (Ctrl-C) during wheel") == "interrupted (Ctrl-C) during wheel");
  const std::string unbroken(200, 'x');
  CHECK(short_reason(unbroken) == std::string(57, 'x') + "...");
  // Never cut inside a UTF-8 sequence.
  std::string accented;
  for (int i = 0; i < 40; ++i)
    accented += "\xc3\xa9";  // é
  const std::string cut = short_reason(accented);
  CHECK(cut.size() <= 60);
  CHECK(cut.substr(0, cut.size() - 3).size() % 2 == 0);
  std::vector<EntryResult> results(1);
  results[0].id = "linux-c";
  results[0].outcome = EntryOutcome::build_failed;
  results[0].message = long_reason;
  const std::string table = format_results(results);
  CHECK(table.find("no CUDA 12.9 toolkit (above)\n") != std::string::npos);
  CHECK(table.find("/usr/local/cuda-12.9") == std::string::npos);
}

TEST_CASE("outcomes have one spelling, read back as written", "[build]") {
  for (const auto outcome :
       {EntryOutcome::built, EntryOutcome::up_to_date, EntryOutcome::build_failed,
        EntryOutcome::verification_failed, EntryOutcome::interrupted, EntryOutcome::not_started}) {
    CHECK(parse_outcome(outcome_name(outcome)) == outcome);
  }
  CHECK_FALSE(parse_outcome("ok"));
}

TEST_CASE("the results record keeps the inputs a later run compares", "[build]") {
  fs::TempDir dir("sagebuild-results");
  matrix::Entry e;
  e.id = "linux-x";
  EntryResult r;
  r.id = e.id;
  r.outcome = EntryOutcome::built;
  r.wheel = "dist/x-1-cp312-cp312-linux_x86_64.whl";
  r.sha256 = "ab";
  r.phases = {{"kernels", 2.5}};
  r.kernels = "k1";
  r.kernel_cache_hit = true;
  r.compile_cache = {.compiles = 9,
                     .local_hits = 1,
                     .remote_hits = 5,
                     .compiled = 2,
                     .uncached = 1,
                     .remote_errors = 3};
  BuildInputs inputs;
  inputs.values = {{"commit", "c1"}, {"dirty", false}, {"torch", "2.11.0"}};
  inputs.digest = "d1";
  write_result(dir.path(), e, r, &inputs);
  const auto recorded = read_recorded_build(dir.path(), e.id);
  REQUIRE(recorded);
  CHECK(recorded->result.outcome == EntryOutcome::built);
  CHECK(recorded->result.wheel.filename() == "x-1-cp312-cp312-linux_x86_64.whl");
  CHECK(recorded->inputs.digest == "d1");
  // What the Docker backend takes from the record of the build inside the container.
  CHECK(recorded->result.kernels == "k1");
  CHECK(recorded->result.kernel_cache_hit);
  const CompileCacheStats& c = recorded->result.compile_cache;
  CHECK(std::tuple(c.compiles, c.local_hits, c.remote_hits, c.compiled, c.uncached,
                   c.remote_errors) == std::tuple(9, 1, 5, 2, 1, 3));
  REQUIRE(recorded->result.phases.size() == 1);
  CHECK(recorded->result.phases[0].seconds == 2.5);
  // A file that is not a record is no record.
  CHECK_FALSE(read_result_file(dir.path() / "missing.json", e.id));
  REQUIRE(fs::write_file_atomic(dir.path() / "garbage.json", "[1, 2"));
  CHECK_FALSE(read_result_file(dir.path() / "garbage.json", e.id));
  // Only what changed is named; a record without inputs names nothing.
  BuildInputs now = inputs;
  now.values["torch"] = "2.12.0";
  CHECK(changed_inputs(recorded->inputs, now) == std::vector<std::string>{"torch"});
  CHECK(changed_inputs(BuildInputs{}, now).empty());
}

}  // namespace
}  // namespace sagebuild::backend
