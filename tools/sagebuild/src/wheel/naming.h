// The wheel naming convention (PRODUCT.md): build tags that encode torch and CUDA, PEP 427 file
// names, and the torch requirement a wheel carries.
#pragma once

#include <string>
#include <string_view>

#include "util/version.h"

namespace sagebuild::wheel {

// "{torch major}{torch minor}{torch patch}.{cuda major}{cuda minor}": torch 2.8.0 + CUDA 12.9
// gives "280.129". The digits alone are ambiguous (2.11.0 and 2.1.10 both give 2110); the loader
// refuses matrices where that happens, and wheels record the exact versions inside.
std::string build_tag(const Version& torch, const Version& cuda);

// PEP 427 escaping of a distribution name: runs of characters other than letters, digits and
// '.' become '_' (so "sage-attention" -> "sage_attention").
std::string escape_distribution_name(std::string_view name);

// "cp312" for Python 3.12.
std::string cpython_tag(const Version& python);

// A wheel's compatibility tags (PEP 425): interpreter, ABI, platform.
struct WheelTags {
  std::string interpreter;  // "cp312", "py3"
  std::string abi;          // "cp312", "none"
  std::string platform;     // "manylinux_2_28_x86_64", "linux_x86_64", "win_amd64"
  std::string str() const { return interpreter + "-" + abi + "-" + platform; }
};

// A per-torch wheel: its binary is for one CPython (cp312-cp312-<platform>).
WheelTags cpython_tags(const Version& python, std::string_view platform_tag);
// A wheel for every Python (a stable-ABI wheel, a per-torch-py3 one): no Python header and no
// libpython in its binary, so any Python 3 takes it (py3-none-<platform>).
WheelTags every_python_tags(std::string_view platform_tag);

// "sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl"
std::string wheel_filename(std::string_view distribution, std::string_view version,
                           std::string_view build_tag, const WheelTags& tags);
std::string wheel_filename(std::string_view distribution, std::string_view version,
                           std::string_view build_tag, const Version& python,
                           std::string_view platform_tag);

// The Requires-Dist pin on torch: "torch==2.8.*". Pinned to the minor release because PyTorch
// keeps its C++ ABI within a minor series (patch releases are cherry-picked fixes) and breaks it
// between minors; pinning the patch would refuse users of 2.8.1 a wheel that works for them.
std::string torch_requirement(const Version& torch);

// The requirement of a stable-ABI wheel built against `target`: "torch>=2.10". No upper bound
// (docs/build.md, "Universal wheels"): the stable ABI is kept across releases, and a torch that
// broke it would make sageattn fall back to SDPA with a warning, while a bound would make pip
// refuse the install or downgrade torch.
std::string torch_requirement_from(const Version& target);

}  // namespace sagebuild::wheel
