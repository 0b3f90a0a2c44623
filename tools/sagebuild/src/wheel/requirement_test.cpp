#include "wheel/requirement.h"

#include <catch2/catch.hpp>

namespace sagebuild::wheel {
namespace {

TEST_CASE("requirements packaging accepts", "[requirement]") {
  for (const char* ok : {"torch==2.11.*", "torch>=2.10", "numpy", " numpy ", "torch (==2.8.*)",
                         "a.b-c_d[x, y]>=1.0,<2", "torch==2.8.*; python_version < '3'",
                         "x; extra == 'cuda' and (os_name == \"nt\" or sys_platform != 'linux')",
                         "x ~= 1.4", "x===anything", "pkg @ https://h/x.whl",
                         "pkg @ file:///x ; os_name=='nt'", "x==1.0+local", "x !=1.*",
                         // the URL runs to white space: ";..." is part of it, as for packaging
                         "pkg @ https://h/x.whl;os_name=='nt'"}) {
    INFO(ok);
    CHECK_FALSE(requirement_error(ok));
  }
}

TEST_CASE("requirements packaging refuses", "[requirement]") {
  for (const char* bad :
       {"", "torch<2Requires-Dist: torch==2.11.*", "torch==", "torch==2.8.* x", "-torch", "torch-",
        "torch (==2.8", "torch>=1.*", "torch~=1", "torch<1.0+local", "x; python_version",
        "x; pyversion == '3'", "x; (os_name == 'nt'", "x[a", "x; os_name == 'nt' and",
        "torch==2.8.*\n ; extra == 'x'"}) {
    INFO(bad);
    CHECK(requirement_error(bad));
  }
  std::string deep = "x; ";
  for (int i = 0; i < 10000; ++i)
    deep += "(";
  CHECK(requirement_error(deep));  // bounded depth, no stack overflow
}

TEST_CASE("markers packaging parses but cannot evaluate are refused", "[requirement]") {
  // Each raises in packaging's Marker.evaluate() (UndefinedComparison, InvalidVersion or an
  // unknown environment key): pip cannot install a wheel that requires it.
  for (const char* bad :
       {"x; 'x' in extras", "x; dependency_groups == 'a'", "x; os_name ~= 'posix'",
        "x; python_version ~= '3'", "x; os_name == '1.0'", "x; platform_release >= '5.0'",
        "x; os_name === 'posix'", "x; 'a' == 'b'", "x; python_version == python_full_version",
        "x; sys_platform ~= '1.0'", "x; python_full_version ~= '1.0+local'"}) {
    INFO(bad);
    CHECK(requirement_error(bad));
  }
  for (const char* ok :
       {"x; python_version ~= '3.10'", "x; python_version == 'abc'", "x; python_version == '3.*'",
        "x; 'linux' in sys_platform", "x; os_name not in 'nt posix'", "x; extra == 'cuda'",
        "x; platform_machine == 'x86_64'"}) {
    INFO(ok);
    CHECK_FALSE(requirement_error(ok));
  }
}

}  // namespace
}  // namespace sagebuild::wheel
