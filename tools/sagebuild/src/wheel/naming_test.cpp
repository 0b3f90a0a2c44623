#include "wheel/naming.h"

#include <catch2/catch.hpp>

namespace sagebuild::wheel {
namespace {

Version v(const char* text) {
  return *Version::parse(text);
}

TEST_CASE("build tags follow the seeds' convention", "[naming]") {
  CHECK(build_tag(v("2.8.0"), v("12.9")) == "280.129");
  CHECK(build_tag(v("2.6.0"), v("12.6")) == "260.126");
  CHECK(build_tag(v("2.11.0"), v("13.0")) == "2110.130");
  // The ambiguity the loader guards against: different releases, same digits.
  CHECK(build_tag(v("2.1.10"), v("13.0")) == build_tag(v("2.11.0"), v("13.0")));
}

TEST_CASE("wheel file names", "[naming]") {
  CHECK(wheel_filename("sageattention", "2.2.0", "280.129", v("3.12"), "linux_x86_64") ==
        "sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl");
  CHECK(wheel_filename("sage-attention", "2.2.0", "260.126", v("3.9"), "win_amd64") ==
        "sage_attention-2.2.0-260.126-cp39-cp39-win_amd64.whl");
  CHECK(escape_distribution_name("a..b--c__d") == "a..b_c_d");
}

TEST_CASE("the torch pin is the minor release", "[naming]") {
  CHECK(torch_requirement(v("2.8.0")) == "torch==2.8.*");
  CHECK(torch_requirement(v("2.11.0")) == "torch==2.11.*");
}

TEST_CASE("stable-ABI wheels: py3-none, torch from the target on", "[naming]") {
  CHECK(wheel_filename("sageattention", "2.2.0", build_tag(v("2.10.0"), v("13.0")),
                       every_python_tags("manylinux_2_28_x86_64")) ==
        "sageattention-2.2.0-2100.130-py3-none-manylinux_2_28_x86_64.whl");
  CHECK(torch_requirement_from(v("2.10.0")) == "torch>=2.10");
  CHECK(cpython_tags(v("3.12"), "linux_x86_64").str() == "cp312-cp312-linux_x86_64");
}

}  // namespace
}  // namespace sagebuild::wheel
