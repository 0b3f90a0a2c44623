#include "wheel/naming.h"

#include <fmt/format.h>

namespace sagebuild::wheel {

std::string build_tag(const Version& torch, const Version& cuda) {
  return fmt::format("{}{}{}.{}{}", torch.major(), torch.minor(), torch.patch(), cuda.major(),
                     cuda.minor());
}

std::string escape_distribution_name(std::string_view name) {
  std::string out;
  bool in_run = false;
  for (const char c : name) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.';
    if (keep) {
      out += c;
      in_run = false;
    } else if (!in_run) {
      out += '_';
      in_run = true;
    }
  }
  return out;
}

std::string cpython_tag(const Version& python) {
  return fmt::format("cp{}{}", python.major(), python.minor());
}

WheelTags cpython_tags(const Version& python, std::string_view platform_tag) {
  const std::string cp = cpython_tag(python);
  return {cp, cp, std::string(platform_tag)};
}

WheelTags every_python_tags(std::string_view platform_tag) {
  return {"py3", "none", std::string(platform_tag)};
}

std::string wheel_filename(std::string_view distribution, std::string_view version,
                           std::string_view build_tag, const WheelTags& tags) {
  return fmt::format("{}-{}-{}-{}.whl", escape_distribution_name(distribution), version, build_tag,
                     tags.str());
}

std::string wheel_filename(std::string_view distribution, std::string_view version,
                           std::string_view build_tag, const Version& python,
                           std::string_view platform_tag) {
  return wheel_filename(distribution, version, build_tag, cpython_tags(python, platform_tag));
}

std::string torch_requirement(const Version& torch) {
  return fmt::format("torch=={}.{}.*", torch.major(), torch.minor());
}

std::string torch_requirement_from(const Version& target) {
  return fmt::format("torch>={}.{}", target.major(), target.minor());
}

}  // namespace sagebuild::wheel
