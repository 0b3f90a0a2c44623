#include "cli/entry_json.h"

namespace sagebuild::cli {

nlohmann::ordered_json entry_to_json(const matrix::Entry& e) {
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
      {"build_tag", e.build_tag},
      {"platform_tag", e.platform_tag},
      {"wheel", e.wheel},
      {"fallback_wheel", e.fallback_wheel},
      {"torch_requirement", e.torch_requirement},
  };
}

}  // namespace sagebuild::cli
