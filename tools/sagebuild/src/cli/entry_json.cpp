#include "cli/entry_json.h"

#include "backend/wheel_finish.h"

namespace sagebuild::cli {

nlohmann::ordered_json entry_to_json(const matrix::Entry& e) {
  const wheel::WheelIdentity id = backend::identity_of(e);
  // Flat string values only: GitHub matrix jobs read them as ${{ matrix.<key> }}.
  return {
      {"id", e.id},
      {"platform", e.platform},
      {"os", e.os},
      {"runner", e.runner},
      {"abi", e.abi_name()},
      {"python", e.python.str()},
      {"torch", e.torch.str()},
      {"cuda", e.cuda.str()},
      {"cuda_full", e.cuda_full},
      {"arch_list", e.arch_list()},
      {"build_tag", id.build_tag},
      {"platform_tag", e.platform_tag},
      {"wheel", id.file_name},
      {"fallback_wheel", id.fallback_file_name},
      {"torch_requirement", id.torch_requirement},
  };
}

}  // namespace sagebuild::cli
