#include "cli/app.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "cli/log_safe_stream.h"
#include "cli/terminal.h"
#include "github/output.h"
#include "test_support.h"
#include "util/fs.h"

namespace sagebuild::cli {
namespace {

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run sagebuild(std::vector<std::string> args,
              const std::filesystem::path& matrix = testing::source_dir() / "matrix.yaml") {
  std::vector<std::string> argv = {"sagebuild", "--matrix", matrix.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<const char*> pointers;
  for (const auto& a : argv)
    pointers.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = run(static_cast<int>(pointers.size()), pointers.data(), out, err);
  return {code, out.str(), err.str()};
}

TEST_CASE("matrix --format json lists the seeds' entries (golden)", "[cli]") {
  const Run r =
      sagebuild({"matrix", "--profile", "sage2-all", "--platform", "linux", "--format", "json"});
  REQUIRE(r.code == kSuccess);
  const std::string difference = testing::compare_golden(
      testing::testdata_dir() / "golden" / "matrix-sage2-all-linux.json", r.out);
  INFO(difference);
  CHECK(difference.empty());
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["count"] == 10);
}

TEST_CASE("matrix --format github appends to GITHUB_OUTPUT", "[cli]") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sagebuild-gh-" + std::to_string(std::random_device{}()));
  const Run r = [&] {
    const testing::ScopedEnv output("GITHUB_OUTPUT", path.string());
    return sagebuild({"matrix", "--profile", "stable", "--format", "github"});
  }();
  REQUIRE(r.code == kSuccess);
  auto outputs = github::parse_output_file(testing::read_text(path));
  std::filesystem::remove(path);
  REQUIRE(outputs);
  const auto matrix = nlohmann::json::parse(outputs->at("matrix"));
  CHECK(matrix["include"].size() == 6);
  CHECK(outputs->at("count") == "6");
}

TEST_CASE("the github format outside Actions says what to do", "[cli]") {
  const testing::ScopedEnv output("GITHUB_OUTPUT", std::nullopt);
  const Run r = sagebuild({"matrix", "--profile", "stable", "--format", "github"});
  CHECK(r.code == kUsageError);
  CHECK(r.err.find("GITHUB_OUTPUT is not set") != std::string::npos);
}

TEST_CASE("exit codes distinguish usage from configuration errors", "[cli]") {
  CHECK(sagebuild({"matrix"}).code == kUsageError);  // --profile is required
  CHECK(sagebuild({"matrix", "--profile", "stable", "--format", "xml"}).code == kUsageError);
  CHECK(sagebuild({"frobnicate"}).code == kUsageError);
  const Run unknown = sagebuild({"matrix", "--profile", "stabel"});
  CHECK(unknown.code == kUsageError);
  CHECK(unknown.err.starts_with(
      "sagebuild: error: unknown profile 'stabel' (did you mean 'stable'?)"));
  const Run bad = sagebuild({"validate"}, testing::testdata_dir() / "bad" / "unknown_key.yaml");
  CHECK(bad.code == kConfigError);
  CHECK(bad.err.find("unknown key 'pyton'") != std::string::npos);
  CHECK(bad.err.find("sagebuild: error: ") != std::string::npos);
  const Run missing = sagebuild({"validate"}, "/nonexistent/matrix.yaml");
  CHECK(missing.code == kConfigError);
  CHECK(sagebuild({"--help"}).code == kSuccess);
  CHECK(sagebuild({"--version"}).code == kSuccess);
}

TEST_CASE("an argument starting with '/' is a path on every platform, never an option", "[cli]") {
  const Run r = sagebuild({"verify-wheel", "/nonexistent/demo-1.0-py3-none-any.whl"});
  CHECK(r.err.find("demo-1.0-py3-none-any.whl") != std::string::npos);
  CHECK(r.err.find("unrecognized") == std::string::npos);
  CHECK(r.err.find("The following argument was not expected") == std::string::npos);
}

TEST_CASE("matrix errors become annotations under GitHub Actions", "[cli]") {
  const Run r = [] {
    const testing::ScopedEnv actions("GITHUB_ACTIONS", "true");
    return sagebuild({"validate"}, testing::testdata_dir() / "bad" / "unknown_key.yaml");
  }();
  CHECK(r.code == kConfigError);
  CHECK(r.out.find("::error file=") != std::string::npos);
  CHECK(r.out.find(",line=8,col=5::unknown key 'pyton'") != std::string::npos);
}

TEST_CASE("annotations are escaped as the Actions toolkit escapes them", "[cli]") {
  CHECK(error_annotation("a:b,c.yaml", 3, 4, "50% of\nthe line") ==
        workflow_command("::error file=a%3Ab%2Cc.yaml,line=3,col=4::50%25 of%0Athe line"));
  CHECK(error_annotation("m.yaml", 0, 0, "whole file") ==
        workflow_command("::error file=m.yaml::whole file"));
}

TEST_CASE("bake writes a file atomically, or to stdout", "[cli]") {
  const Run r = sagebuild({"bake", "--profile", "default"});
  REQUIRE(r.code == kSuccess);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["target"].size() == 1);
  CHECK(doc["group"]["default"]["targets"][0] == "linux-sage2-pytorch28-cu129-python312");
  const Run windows_only = sagebuild({"bake", "--profile", "no-such"});
  CHECK(windows_only.code == kUsageError);
}

TEST_CASE("build needs to be told what to build, and says so", "[cli]") {
  const Run both = sagebuild({"build", "--env", "current", "--profile", "stable"});
  CHECK(both.code == kUsageError);
  CHECK(both.err.find("--env current builds this environment's wheel; it does not take "
                      "--profile or --entry") != std::string::npos);
  const Run none = sagebuild({"build"});
  CHECK(none.code == kUsageError);
  CHECK(none.err.find("say what to build: --profile NAME, --entry ID, or --env current") !=
        std::string::npos);
  const Run typo =
      sagebuild({"build", "--entry", "linux-sage2-pytorch28-cu129-python311x", "--dry-run"});
  CHECK(typo.code == kUsageError);
  CHECK(typo.err.find("no entry 'linux-sage2-pytorch28-cu129-python311x' in any profile (did you "
                      "mean 'linux-sage2-pytorch28-cu129-python311'?)") != std::string::npos);
  const Run windows = sagebuild({"build", "--profile", "stable", "--platform", "windows"});
  CHECK(windows.code == kUsageError);
  CHECK(windows.err.find("is a windows entry: it builds on a windows runner") != std::string::npos);
}

TEST_CASE("build --dry-run shows each entry's plan and builds nothing", "[cli]") {
  const Run dry = sagebuild({"build", "--profile", "stable", "--dry-run", "--skip-unavailable",
                             "--cache-dir", "/nonexistent/sagebuild-cache"});
  CHECK(dry.code == kSuccess);
  CHECK(dry.out.find("sagebuild: 3 entries of profile stable") != std::string::npos);
  CHECK(dry.out.find(" of 3 entries can build here") != std::string::npos);
  CHECK(dry.out.find("linux-sage2-pytorch28-cu129-python312\n  wheel        "
                     "sageattention-2.2.0-280.129-cp312-cp312-manylinux_2_28_x86_64.whl") !=
        std::string::npos);
  CHECK(dry.out.find("-m pip wheel --no-deps --no-build-isolation") != std::string::npos);
  CHECK(dry.out.find("TORCH_CUDA_ARCH_LIST=8.0;8.6;8.9;9.0a;12.0") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists("/nonexistent/sagebuild-cache"));

  // Without --skip-unavailable a plan that cannot build everything here fails as the build would;
  // which entries can build depends on the machine's CUDA toolkits, so both outcomes are checked.
  const Run strict = sagebuild({"build", "--profile", "stable", "--dry-run"});
  if (strict.out.find("cannot:\n") == std::string::npos) {
    CHECK(strict.code == kSuccess);
  } else {
    CHECK(strict.code == kBuildFailure);
    CHECK(strict.err.find("cannot build on this machine (see above; --skip-unavailable builds the "
                          "others)") != std::string::npos);
  }
}

TEST_CASE("profiles and validate", "[cli]") {
  const Run profiles = sagebuild({"profiles"});
  CHECK(profiles.code == kSuccess);
  const auto sage2_all = profiles.out.find("\nsage2-all ");
  REQUIRE(sage2_all != std::string::npos);
  CHECK(profiles.out.substr(sage2_all, profiles.out.find('\n', sage2_all + 1) - sage2_all)
            .find(" linux 10, windows 10") != std::string::npos);
  const Run validate = sagebuild({"validate"});
  CHECK(validate.code == kSuccess);
  CHECK(validate.out.find(": ok (sageattention 2.2.0") != std::string::npos);
}

TEST_CASE("cache lists and prunes the build cache", "[cli]") {
  fs::TempDir dir("sagebuild-cache");
  const std::filesystem::path entry = dir.path() / "kernels" / "cuda13.0-aa";
  std::filesystem::create_directories(entry);
  std::ofstream(entry / "kernels.a") << std::string(2000, 'x');
  const std::filesystem::path lock = entry.string() + ".lock";
  std::ofstream(lock).flush();
  std::filesystem::last_write_time(
      lock, std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 40));
  const std::string cache = dir.path().string();

  const Run listed = sagebuild({"cache", "--cache-dir", cache});
  CHECK(listed.code == kSuccess);
  CHECK(listed.out.find("kernels/cuda13.0-aa") != std::string::npos);
  CHECK(listed.out.find("40 days ago") != std::string::npos);
  const Run json = sagebuild({"cache", "list", "--format", "json", "--cache-dir", cache});
  CHECK(nlohmann::json::parse(json.out)["entries"][0]["bytes"] == 2000);

  const Run vague = sagebuild({"cache", "prune", "--cache-dir", cache});
  CHECK(vague.code == kUsageError);
  CHECK(vague.err.find("say what to prune: --older-than AGE, --max-size SIZE or --all") !=
        std::string::npos);
  const Run typo = sagebuild({"cache", "prune", "--older-thn", "30d"});
  CHECK(typo.code == kUsageError);
  CHECK(typo.err.find("did you mean '--older-than'?") != std::string::npos);
  const Run dry =
      sagebuild({"cache", "prune", "--older-than", "30d", "--dry-run", "--cache-dir", cache});
  CHECK(dry.out.find("would remove kernels/cuda13.0-aa (2 kB, unused for 40 days)") !=
        std::string::npos);
  CHECK(std::filesystem::exists(entry));
  const Run young = sagebuild({"cache", "prune", "--older-than", "60d", "--cache-dir", cache});
  CHECK(young.out.find("removed 0 entries") != std::string::npos);
  const Run pruned = sagebuild({"cache", "prune", "--older-than", "30d", "--cache-dir", cache});
  CHECK(pruned.code == kSuccess);
  CHECK(pruned.out.find("removed kernels/cuda13.0-aa") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(entry));
}

}  // namespace
}  // namespace sagebuild::cli
