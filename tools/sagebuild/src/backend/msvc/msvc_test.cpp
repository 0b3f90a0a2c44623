#include "backend/msvc/msvc.h"

#include <sstream>

#include <catch2/catch.hpp>

namespace sagebuild::backend {
namespace {

TEST_CASE("vswhere's JSON gives the installations, newest first", "[msvc]") {
  auto found = parse_vswhere(R"([
    {"installationPath": "C:\\BuildTools", "installationVersion": "17.9.34728.123",
     "displayName": "Visual Studio Build Tools 2022"},
    {"installationPath": "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise",
     "installationVersion": "17.11.35312.102", "displayName": "Visual Studio Enterprise 2022"}
  ])");
  REQUIRE(found);
  REQUIRE(found->size() == 2);
  CHECK((*found)[0].version == "17.11.35312.102");  // 17.11 after 17.9: numeric, not text
  CHECK((*found)[0].path == "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise");
  CHECK(parse_vswhere("[]")->empty());
  CHECK_FALSE(parse_vswhere("vswhere: unknown option"));
}

TEST_CASE("the vswhere and vcvars commands", "[msvc]") {
  const auto vswhere = vswhere_command("C:\\Program Files (x86)");
  CHECK(vswhere.front() ==
        "C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\vswhere.exe");
  CHECK(std::find(vswhere.begin(), vswhere.end(),
                  "Microsoft.VisualStudio.Component.VC.Tools.x86.x64") != vswhere.end());
  const auto vcvars = vcvars_command({"C:\\VS", "17.11", "VS"});
  CHECK(vcvars ==
        std::vector<std::string>{"cmd.exe", "/s", "/c",
                                 "\"\"C:\\VS\\VC\\Auxiliary\\Build\\vcvars64.bat\" >nul && set\""});
}

TEST_CASE("the environment vcvars64.bat makes is read from `set`", "[msvc]") {
  const auto env = parse_set_output(
      "**********************************************************************\r\n"
      "** Visual Studio 2022 Developer Command Prompt v17.11.5\r\n"
      "=C:=C:\\work\r\n"
      "INCLUDE=C:\\VS\\VC\\Tools\\MSVC\\14.41.34120\\include;C:\\Kits\\include\r\n"
      "Path=C:\\VS\\VC\\Tools\\MSVC\\14.41.34120\\bin\\HostX64\\x64;C:\\Windows\r\n"
      "VCToolsVersion=14.41.34120\r\n");
  REQUIRE(env.size() == 3);
  CHECK(env[0].first == "INCLUDE");
  CHECK(env[1] ==
        std::pair<std::string, std::string>{
            "Path", "C:\\VS\\VC\\Tools\\MSVC\\14.41.34120\\bin\\HostX64\\x64;C:\\Windows"});
  CHECK(msc_ver_from_environment(env) == 1941);
  CHECK_FALSE(msc_ver_from_environment({{"Path", "C:\\"}}));
}

TEST_CASE("nvcc's accepted MSVC range is checked before compiling", "[msvc]") {
  const Version cuda121 = *Version::parse("12.1"), cuda126 = *Version::parse("12.6"),
                cuda130 = *Version::parse("13.0");
  CHECK_FALSE(check_msvc_compatibility(cuda126, 1941));  // VS 2022 17.11 with CUDA 12.6
  CHECK_FALSE(check_msvc_compatibility(cuda121, 1939));
  auto old_cuda = check_msvc_compatibility(cuda121, 1941);  // VS 17.11 is too new for 12.1
  REQUIRE(old_cuda);
  CHECK(old_cuda->starts_with(
      "MSVC 14.41 (_MSC_VER 1941) is not one nvcc 12.1 accepts (1910 to 1939)"));
  CHECK(check_msvc_compatibility(cuda130, 1916));  // VS 2017 is gone in CUDA 13
  CHECK(check_msvc_compatibility(cuda130, 1950));  // VS 2026's toolset is not in the range
  CHECK_FALSE(check_msvc_compatibility(cuda130, 1944));
}

TEST_CASE("a Windows entry's plan names each step", "[msvc]") {
  std::ostringstream out;
  Log log(out, out, Log::Level::detail);
  describe_msvc({{"windows-pytorch28-cu129-python312",
                  "x-1.0-280.129-cp312-cp312-win_amd64.whl",
                  *Version::parse("12.9"),
                  {"{python}", "-m", "pip", "wheel"}}},
                log);
  const std::string plan = out.str();
  CHECK(plan.find("vswhere.exe -latest -products * -requires "
                  "Microsoft.VisualStudio.Component.VC.Tools.x86.x64") != std::string::npos);
  CHECK(plan.find("vcvars64.bat") != std::string::npos);
  CHECK(plan.find("nvcc 12.9 accepts _MSC_VER 1910 to 1949 (VCToolsVersion 14.10 to 14.49)") !=
        std::string::npos);
  CHECK(plan.find("{python} -m pip wheel\n    CMAKE_GENERATOR=Ninja") != std::string::npos);
}

}  // namespace
}  // namespace sagebuild::backend
