// The manylinux policies (PEP 600) as auditwheel's policy file states them (x86_64 and aarch64
// agree on everything that matters here): the symbol versions each allows and the libraries
// every such system has. verify-wheel (B002, B003) judges a wheel's binaries by them, and
// `sagebuild build` gives a wheel the manylinux tag only when they hold.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "wheel/elf.h"

namespace sagebuild::wheel {

struct LinuxPolicy {
  std::string_view name;  // "manylinux_2_28"
  int glibc_minor;        // 28
  // The newest version allowed per symbol-version family; "" when the family is not allowed.
  std::string_view glibc, glibcxx, cxxabi, gcc, libatomic, zlib;
  bool libmvec;          // libmvec.so.1 is on the list (from manylinux_2_24 on)
  bool libexpat;         // libexpat.so.1 is on the list (from manylinux_2_12 on)
  bool glibc_dt_relr;    // GLIBC_ABI_DT_RELR is allowed (from manylinux_2_36 on)
  bool cxxabi_float128;  // CXXABI_FLOAT128 is allowed (from manylinux_2_24 on)
};

// Every policy, oldest first.
const std::vector<LinuxPolicy>& linux_policies();

// "manylinux_2_28_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64" -> its policy; nothing
// for other tags.
const LinuxPolicy* policy_for_tag(std::string_view platform_tag);

// Libraries a CUDA extension for torch may need beyond the policy's list, because torch and the
// CUDA runtime wheels it depends on provide them wherever the wheel can work (libtorch*.so,
// libc10*.so, libcudart.so.N), or the NVIDIA driver does (libcuda.so.1).
bool provided_by_torch_or_driver(std::string_view library);

// What keeps one binary from `policy`: libraries neither on its list, nor in the wheel, nor
// provided by torch or the driver; symbol versions newer than it allows, each with the symbols
// that ask for it ("needs GLIBC_2.34 (pthread_create, dlopen, ...); manylinux_2_28 allows GLIBC
// up to 2.28"). Empty when the binary meets the policy.
struct PolicyViolation {
  enum class Kind { library, symbol } kind;
  std::string message;
};
std::vector<PolicyViolation> policy_violations(const ElfInfo& elf, const LinuxPolicy& policy,
                                               const std::vector<std::string>& libraries_in_wheel);

// The oldest policy whose symbol-version rules the binaries meet (what auditwheel calls the tag
// the symbol versions constrain it to); nothing when even the newest is exceeded.
std::optional<std::string> symbol_policy(const std::vector<const ElfInfo*>& binaries);

// DT_NEEDED libraries that are on no policy's list and not in the wheel (what auditwheel lists as
// external, before the torch and driver libraries are allowed).
std::vector<std::string> external_libraries(const std::vector<const ElfInfo*>& binaries,
                                            const std::vector<std::string>& libraries_in_wheel);

// A wheel judged by a policy before it is named (sagebuild build): every ELF binary in it read
// and checked; "path: message" per violation.
Expected<std::vector<std::string>> wheel_policy_violations(const std::filesystem::path& wheel,
                                                           const LinuxPolicy& policy);

// A file name that holds compiled code: "*.so", "*.so.N", "*.pyd", "*.dll".
bool is_binary_name(std::string_view name);

}  // namespace sagebuild::wheel
