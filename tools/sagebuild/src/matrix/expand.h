// Profiles -> build entries. A profile selects from the valid combinations:
//   per-torch  platform x torch release x a CUDA it was published for x a Python it was
//              published for
//   stable     platform x a CUDA that a torch release from stable_abi.target on was published
//              for, with torch = the target and Python = the newest the target supports (the
//              interpreter that builds the one wheel every Python shares)
//
//   from      start from the union of other profiles (default: every valid combination)
//   include   keep the combinations that match any rule (rules are glob patterns per axis)
//   exclude   then drop the combinations that match any rule
//   platforms then keep only these platforms
//   latest    then, among combinations equal on every other axis, keep the newest of this axis
//             ("latest: python" gives the newest Python for each torch/CUDA/platform)
//   archs     the CUDA architectures to build (default: the toolkit's, else default_archs that
//             the toolkit can target)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "matrix/model.h"
#include "util/expected.h"

namespace sagebuild::matrix {

// One wheel to build: the matrix's facts about it. Its name, tags, torch pin and glibc floor follow
// from them in one place (wheel/identity.h, through backend::identity_of).
struct Entry {
  std::string id;               // "linux-sage2-pytorch28-cu129-python312"
  std::string package;          // the distribution name, "sageattention"
  std::string package_version;  // "2.2.0"
  std::string platform;
  std::string platform_tag;
  std::string os;
  std::string runner;
  std::string docker_platform;
  Version torch;
  Version cuda;
  std::string cuda_full;
  Version python;  // a stable-ABI entry's wheel serves every Python: this one builds it
  Abi abi = Abi::per_torch;
  std::vector<std::string> archs;
  // The platform's tag for a wheel whose binaries miss the policy platform_tag names, or "".
  std::string fallback_platform_tag;

  std::string arch_list() const;  // "8.0;8.6;9.0a": TORCH_CUDA_ARCH_LIST form
  const char* abi_name() const { return matrix::abi_name(abi); }
};

// The fields package.entry_id may use, e.g. "{platform}-pytorch{torch_major}{torch_minor}".
// Returns a description of the problem, or nothing when the template is usable; `key` names
// the template in it.
std::optional<std::string> check_entry_id_template(std::string_view id_template,
                                                   std::string_view key = "package.entry_id");

// One entry: its id follows from these (and its wheel's identity, in wheel/identity.h). Profiles
// make theirs through expand_profile; `sagebuild build --env current` makes one for the
// environment it finds.
struct EntrySpec {
  const Platform* platform;
  Version torch;
  Version cuda;
  std::string cuda_full;
  Version python;
  Abi abi = Abi::per_torch;
  std::vector<std::string> archs;
};
Entry make_entry(const Matrix& matrix, const EntrySpec& spec, const std::string& package_version);

// The architectures to build for `toolkit` under `profile` (which may be null).
std::vector<std::string> resolve_archs(const Matrix& matrix, const CudaToolkit& toolkit,
                                       const Profile* profile);

// Every problem in the profiles of a structurally valid matrix, located: rules naming unknown
// versions, rules that can match nothing (with the reason), cycles in 'from', empty profiles,
// architectures a toolkit cannot target, and ids that name two different builds.
Diagnostics validate_profiles(const Matrix& matrix);

struct ExpandOptions {
  std::string package_version;   // for wheel names
  std::string platform = "all";  // a platform name, an os ("linux"/"windows"), or "all"
};

// The entries of one profile, sorted by platform (as declared), torch, CUDA, Python. Errors are
// for the caller's arguments (unknown profile or platform, nothing left for that platform).
Expected<std::vector<Entry>> expand_profile(const Matrix& matrix, std::string_view profile,
                                            const ExpandOptions& options);

// Every entry of every profile on the platform(s) `options` names, each id once (the first
// profile in matrix.yaml that has it gives it its archs), in profile order. One selection over
// all profiles: linear in their number, where a loop of expand_profile calls is quadratic.
std::vector<Entry> expand_all_profiles(const Matrix& matrix, const ExpandOptions& options);

// Every profile's entries (each profile whole, as expand_profile gives them), in matrix.yaml's
// order, from one selection over all profiles. A profile with no entries on the platform(s) has
// an empty list.
std::vector<std::pair<std::string, std::vector<Entry>>> expand_each_profile(
    const Matrix& matrix, const ExpandOptions& options);

}  // namespace sagebuild::matrix
