#include "matrix/loader.h"

#include <catch2/catch.hpp>

#include "test_support.h"

namespace sagebuild::matrix {
namespace {

std::string render_all(const LoadResult& result, const std::string& text) {
  std::string out;
  for (const Diagnostic& d : result.diagnostics)
    out += render(d, text);
  return out;
}

std::string first_headline(std::string_view text) {
  const LoadResult result = load_matrix(text, "matrix.yaml");
  REQUIRE_FALSE(result.diagnostics.empty());
  return format_headline(result.diagnostics.front());
}

TEST_CASE("the repository's matrix.yaml loads without problems", "[loader]") {
  const std::string text = testing::read_text(testing::source_dir() / "matrix.yaml");
  const LoadResult result = load_matrix(text, "matrix.yaml");
  INFO(render_all(result, text));
  REQUIRE(result.matrix);
  CHECK(result.matrix->package.name == "sageattention");
  CHECK(result.matrix->find_profile("sage2-all"));
}

TEST_CASE("the small test matrix loads", "[loader]") {
  const std::string text = testing::read_text(testing::testdata_dir() / "small.yaml");
  const LoadResult result = load_matrix(text, "small.yaml");
  INFO(render_all(result, text));
  REQUIRE(result.matrix);
  CHECK(result.matrix->torch.size() == 2);
  CHECK(result.matrix->platforms[1].tag == "win_amd64");
}

// Each file under testdata/bad/ is a broken matrix; its .expected file holds the exact text
// sagebuild prints for it (SAGEBUILD_UPDATE_GOLDEN=1 rewrites them).
TEST_CASE("bad matrix files give located errors with the exact expected text", "[loader]") {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(testing::testdata_dir() / "bad")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 12);
  for (const auto& file : files) {
    SECTION(file.filename().string()) {
      const std::string text = testing::read_text(file);
      const LoadResult result = load_matrix(text, "matrix.yaml");
      CHECK_FALSE(result.matrix);
      CHECK_FALSE(result.diagnostics.empty());
      std::filesystem::path golden = file;
      golden.replace_extension(".expected");
      const std::string difference = testing::compare_golden(golden, render_all(result, text));
      INFO(difference);
      CHECK(difference.empty());
    }
  }
}

TEST_CASE("a misspelt key names the key it was probably meant to be", "[loader]") {
  CHECK(first_headline(R"(package: {name: x, version: {file: V, regex: '(.*)'}, source_dir: p}
cuda: {}
torch: {}
platforms: {}
profiles: {}
pyton: 3
)") == "matrix.yaml:6:1: unknown key 'pyton' in the top level");
  // "pyton" is close to no top-level key, so no suggestion; inside a torch release it is.
  CHECK(first_headline(R"(package: {name: x, version: {file: V, regex: '(.*)'}, source_dir: p}
cuda: {"12.6": {version: 12.6.1}}
torch:
  "2.6.0": {cuda: ["12.6"], pyton: ["3.10"]}
platforms: {}
profiles: {}
)") == "matrix.yaml:4:29: unknown key 'pyton' in torch '2.6.0' (did you mean 'python'?)");
}

TEST_CASE("YAML syntax errors carry the parser's position", "[loader]") {
  CHECK(first_headline("a: [1, 2\nb: 3\n") ==
        "matrix.yaml:2:2: YAML syntax error: end of sequence flow not found");
}

TEST_CASE("the loader survives hostile input", "[loader]") {
  // Deep nesting, odd scalars, binary noise: an error each time, never a crash or an exception.
  std::string deep(20000, '[');
  for (const std::string& text :
       {deep, std::string("\xff\xfe\x00\x01", 4), std::string("- - - -"), std::string("!!binary x"),
        std::string("package: *unknown_anchor"), std::string("? [a, b]\n: c\n")}) {
    const LoadResult result = load_matrix(text, "matrix.yaml");
    CHECK_FALSE(result.matrix);
    CHECK_FALSE(result.diagnostics.empty());
  }
}

}  // namespace
}  // namespace sagebuild::matrix

namespace sagebuild::matrix {
namespace {

constexpr const char* kWithToolchains = R"(package:
  name: x
  version: {file: V, regex: '(.*)'}
  source_dir: p
  build_requires: ["scikit-build-core==1.1.2", ninja]
architectures: {"8.0": ">=11.0"}
default_archs: ["8.0"]
cuda:
  "12.6": {version: 12.6.1}
  "13.0": {version: 13.0.1, pypi: "cuda-toolkit[nvcc]==13.0.1"}
torch:
  "2.11.0": {cuda: ["13.0"], python: ["3.12"]}
platforms:
  linux: {tag: linux_x86_64, os: linux}
profiles:
  all: {description: everything}
toolchains:
  python: {"3.12": ~/py/bin/python3.12}
  cuda: {"12.6": /opt/cuda-12.6}
)";

TEST_CASE("build_requires, a toolkit's pypi requirement and toolchains are read", "[loader]") {
  const LoadResult r = load_matrix(kWithToolchains, "matrix.yaml");
  REQUIRE(r.diagnostics.empty());
  REQUIRE(r.matrix);
  CHECK(r.matrix->package.build_requires ==
        std::vector<std::string>{"scikit-build-core==1.1.2", "ninja"});
  CHECK(r.matrix->find_cuda(*Version::parse("13.0"))->pypi == "cuda-toolkit[nvcc]==13.0.1");
  CHECK(r.matrix->find_cuda(*Version::parse("12.6"))->pypi.empty());
  REQUIRE(r.matrix->toolchains.python.size() == 1);
  CHECK(r.matrix->toolchains.python[0].first.str() == "3.12");
  CHECK(r.matrix->toolchains.python[0].second.value == "~/py/bin/python3.12");
  CHECK(r.matrix->toolchains.python[0].second.location.line == 18);
  REQUIRE(r.matrix->toolchains.cuda.size() == 1);
  CHECK(r.matrix->toolchains.cuda[0].second.value == "/opt/cuda-12.6");
}

TEST_CASE("toolchains are checked like the rest of the file", "[loader]") {
  std::string text = kWithToolchains;
  text.replace(text.find("cuda: {\"12.6\": /opt"), 4, "cdua");
  const LoadResult typo = load_matrix(text, "matrix.yaml");
  REQUIRE_FALSE(typo.diagnostics.empty());
  CHECK(format_headline(typo.diagnostics[0]) ==
        "matrix.yaml:19:3: unknown key 'cdua' in toolchains (did you mean 'cuda'?)");
  text = kWithToolchains;
  text.replace(text.find("\"3.12\": ~/py"), 6, "\"3.12.1\"");
  const LoadResult patch = load_matrix(text, "matrix.yaml");
  REQUIRE_FALSE(patch.diagnostics.empty());
  CHECK(format_headline(patch.diagnostics[0]) ==
        "matrix.yaml:18:12: toolchains.python is keyed by major.minor ('3.12'), not '3.12.1'");
}

}  // namespace
}  // namespace sagebuild::matrix
