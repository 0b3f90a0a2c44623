#include "wheel/identity.h"

#include <fmt/format.h>

#include "wheel/linux_policy.h"

namespace sagebuild::wheel {

WheelIdentity identify(const WheelFacts& f) {
  WheelIdentity id;
  id.distribution = f.distribution;
  id.version = f.version;
  id.build_tag = build_tag(f.torch, f.cuda);
  id.tags =
      f.every_python ? every_python_tags(f.platform_tag) : cpython_tags(f.python, f.platform_tag);
  id.file_name = wheel_filename(f.distribution, f.version, id.build_tag, id.tags);
  if (!f.fallback_platform_tag.empty()) {
    WheelTags fallback = id.tags;
    fallback.platform = f.fallback_platform_tag;
    id.fallback_tags = fallback;
    id.fallback_file_name = wheel_filename(f.distribution, f.version, id.build_tag, fallback);
  }
  id.torch_requirement =
      f.stable_abi ? torch_requirement_from(f.torch) : torch_requirement(f.torch);
  if (const LinuxPolicy* policy = policy_for_tag(f.platform_tag)) {
    id.glibc_floor = fmt::format("2.{}", policy->glibc_minor);
  }
  id.archs = f.archs;
  return id;
}

}  // namespace sagebuild::wheel
