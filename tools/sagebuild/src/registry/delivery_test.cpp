#include "registry/delivery.h"

#include <catch2/catch.hpp>

namespace sagebuild::registry {
namespace {

IndexedWheel wheel_named(const std::string& file, const std::string& torch = "2.9.0",
                         const std::string& cuda = "12.8.1", bool stable = false) {
  IndexedWheel w;
  w.path = file;
  w.project = "sageattention";
  w.version =
      file.substr(file.find('-') + 1, file.find('-', file.find('-') + 1) - file.find('-') - 1);
  w.variant = "a variant";
  w.stable_abi = stable;
  w.torch = *Version::parse(torch);
  w.cuda = *Version::parse(cuda);
  return w;
}

// The pairs found; `wheels` must outlive the result (it points into it).
std::vector<Ambiguity> among(const std::vector<IndexedWheel>& wheels) {
  std::vector<const IndexedWheel*> pointers;
  for (const auto& w : wheels)
    pointers.push_back(&w);
  return find_ambiguities(pointers);
}

TEST_CASE("labels name the variant: CUDA for a universal wheel, CUDA and torch otherwise",
          "[delivery]") {
  const auto universal = wheel_named("sageattention-2.2.0-2100.130-py3-none-linux_x86_64.whl",
                                     "2.10.0", "13.0.1", true);
  CHECK(variant_label(universal) == "cu130");
  CHECK(delivered_version(universal) == "2.2.0+cu130");
  const auto per_torch = wheel_named("sageattention-2.2.0-290.128-cp312-cp312-linux_x86_64.whl");
  CHECK(variant_label(per_torch) == "cu128torch2.9");
  CHECK(delivered_version(per_torch) == "2.2.0+cu128torch2.9");

  auto dev = per_torch;
  dev.version = "2.2.1.dev3+g1a2b3c4";
  CHECK(delivered_version(dev) == "2.2.1.dev3+g1a2b3c4.cu128torch2.9");
  auto labelled = per_torch;
  labelled.version = "2.2.0+cu128torch2.9";
  CHECK(delivered_version(labelled) == labelled.version);  // labelled once, never twice

  auto unknown = per_torch;
  unknown.variant.clear();  // no provenance: nothing to label with
  CHECK(variant_label(unknown).empty());
}

TEST_CASE("one environment, two files of one version: the less specific one is hidden",
          "[delivery]") {
  const std::vector<IndexedWheel> set = {
      wheel_named("sageattention-2.2.0-2100.130-py3-none-manylinux_2_28_x86_64.whl", "2.10.0",
                  "13.0.1", true),
      wheel_named("sageattention-2.2.0-2110.130-cp312-cp312-manylinux_2_28_x86_64.whl"),
  };
  const auto found = among(set);
  REQUIRE(found.size() == 1);
  CHECK(found[0].taken->path.filename().string().find("cp312") != std::string::npos);
  CHECK(found[0].environment == "CPython 3.12 on Linux x86_64");
  CHECK(describe(found[0]).find("2.2.0+cu130") != std::string::npos);
}

TEST_CASE("the higher build tag wins between files of one tag", "[delivery]") {
  const std::vector<IndexedWheel> set = {
      wheel_named("sageattention-2.2.0-2100.128-py3-none-linux_x86_64.whl", "2.10.0", "12.8.1",
                  true),
      wheel_named("sageattention-2.2.0-2100.130-py3-none-linux_x86_64.whl", "2.10.0", "13.0.1",
                  true),
  };
  const auto found = among(set);
  REQUIRE(found.size() == 1);
  CHECK(found[0].taken->path.filename().string().find("2100.130") != std::string::npos);
  CHECK(found[0].environment == "CPython 3 on Linux x86_64");
}

TEST_CASE("files no one environment can take together are no ambiguity", "[delivery]") {
  CHECK(among({
                  wheel_named("sageattention-2.2.0-290.128-cp311-cp311-linux_x86_64.whl"),
                  wheel_named("sageattention-2.2.0-290.128-cp312-cp312-linux_x86_64.whl"),
                  wheel_named("sageattention-2.2.0-290.128-cp312-cp312-win_amd64.whl"),
                  wheel_named("sageattention-2.2.0-290.128-cp312-cp312-musllinux_1_2_x86_64.whl"),
                  wheel_named("sageattention-2.2.0-290.128-cp312-cp312-manylinux_2_28_aarch64.whl"),
                  wheel_named("sageattention-2.2.0+cu130-2100.130-py3-none-linux_x86_64.whl"),
                  wheel_named("sageattention-2.2.1-290.128-cp312-cp312-linux_x86_64.whl"),
              })
            .empty());
}

TEST_CASE("policies of one platform meet; abi3 and py3X reach later Pythons", "[delivery]") {
  CHECK(among({wheel_named("sageattention-2.2.0-290.128-cp312-cp312-linux_x86_64.whl"),
               wheel_named("sageattention-2.2.0-290.129-cp312-cp312-manylinux2014_x86_64.whl")})
            .size() == 1);
  const std::vector<IndexedWheel> set = {
      wheel_named("sageattention-2.2.0-1-cp39-abi3-manylinux_2_28_x86_64.whl"),
      wheel_named("sageattention-2.2.0-1-cp312-cp312-manylinux_2_28_x86_64.whl")};
  const auto abi3 = among(set);
  REQUIRE(abi3.size() == 1);
  CHECK(abi3[0].taken->path.filename().string().find("cp312-cp312") != std::string::npos);
  CHECK(among({wheel_named("sageattention-2.2.0-1-cp312-abi3-linux_x86_64.whl"),
               wheel_named("sageattention-2.2.0-1-cp311-cp311-linux_x86_64.whl")})
            .empty());  // abi3 from 3.12 on: 3.11 takes only the other
  CHECK(among({wheel_named("sageattention-2.2.0-1-py312-none-any.whl"),
               wheel_named("sageattention-2.2.0-1-cp313-cp313-linux_x86_64.whl")})
            .size() == 1);
}

// The file names combined_surface keeps of `wheels`, in their order.
std::vector<std::string> kept_on_combined(const std::vector<IndexedWheel>& wheels) {
  std::vector<const IndexedWheel*> pointers;
  for (const auto& w : wheels)
    pointers.push_back(&w);
  std::vector<std::string> names;
  for (const IndexedWheel* w : combined_surface(pointers).wheels)
    names.push_back(w->path.filename().string());
  return names;
}

TEST_CASE("a combined surface leaves out the per-torch wheels a universal wheel serves",
          "[delivery]") {
  const std::vector<IndexedWheel> set = {
      wheel_named("sageattention-2.2.0+cu130-2100.130-py3-none-manylinux_2_28_x86_64.whl", "2.10.0",
                  "13.0.1", true),
      wheel_named("sageattention-2.2.0+cu128-2100.128-py3-none-manylinux_2_28_x86_64.whl", "2.10.0",
                  "12.8.1", true),
      // Served (torch 2.11 and 2.10 are at or above the target): left out, of either CUDA major.
      wheel_named(
          "sageattention-2.2.0+cu130torch2.11-2110.130-cp312-cp312-manylinux_2_28_x86_64.whl",
          "2.11.0", "13.0.1"),
      wheel_named("sageattention-2.2.0+cu128torch2.10-2100.128-py3-none-manylinux_2_28_x86_64.whl",
                  "2.10.0", "12.8.1"),
      // Not served: an older torch, another platform, another release of the project.
      wheel_named("sageattention-2.2.0+cu128torch2.9-290.128-py3-none-manylinux_2_28_x86_64.whl"),
      wheel_named("sageattention-2.2.0+cu130torch2.11-2110.130-cp312-cp312-win_amd64.whl", "2.11.0",
                  "13.0.1"),
      wheel_named(
          "sageattention-2.2.1+cu130torch2.11-2110.130-cp312-cp312-manylinux_2_28_x86_64.whl",
          "2.11.0", "13.0.1"),
  };
  CHECK(kept_on_combined(set) ==
        std::vector<std::string>{set[0].path.string(), set[1].path.string(), set[4].path.string(),
                                 set[5].path.string(), set[6].path.string()});
  std::vector<const IndexedWheel*> pointers;
  for (const auto& w : set)
    pointers.push_back(&w);
  const auto combined = combined_surface(pointers);
  REQUIRE(combined.left_out.size() == 2);
  CHECK(combined.left_out[0].wheel == &set[2]);
  CHECK(combined.left_out[0].served_by->stable_abi);
  const std::string line = describe(combined.left_out[0]);
  CHECK(line.find("cu130torch2.11-2110.130-cp312") != std::string::npos);
  CHECK(line.find("torch 2.11") != std::string::npos);
  CHECK(line.find("CUDA 13 builds") != std::string::npos);

  // Without a universal wheel nothing is left out: the per-torch wheels are all there is.
  CHECK(kept_on_combined({set[2], set[3], set[4]}).size() == 3);
}

}  // namespace
}  // namespace sagebuild::registry
