#include "backend/bake.h"

#include <set>

#include "backend/wheel_finish.h"

namespace sagebuild::backend {

nlohmann::ordered_json make_bake_file(const std::vector<BakeGroup>& groups,
                                      const BakeOptions& options) {
  nlohmann::ordered_json file;
  nlohmann::ordered_json group_section = nlohmann::ordered_json::object();
  nlohmann::ordered_json target_section = nlohmann::ordered_json::object();
  std::set<std::string> written;

  for (const BakeGroup& group : groups) {
    nlohmann::ordered_json names = nlohmann::ordered_json::array();
    for (const matrix::Entry& e : group.entries) {
      if (e.docker_platform.empty()) continue;
      names.push_back(e.id);
      if (!written.insert(e.id).second) continue;
      nlohmann::ordered_json target;
      target["context"] = options.context;
      target["dockerfile"] = options.dockerfile;
      target["target"] = options.stage;
      target["platforms"] = {e.docker_platform};
      target["args"] = {
          {"PYTHON_VERSION", e.python.str()}, {"TORCH_VERSION", e.torch.str()},
          {"CUDA_VERSION", e.cuda_full},      {"TORCH_CUDA_ARCH_LIST", e.arch_list()},
          {"SAGEBUILD_ENTRY", e.id},
      };
      target["labels"] = {
          {"org.opencontainers.image.title", identity_of(e).file_name},
      };
      target["output"] = {"type=local,dest=" + (options.output_per_target
                                                    ? options.output_dir + "/" + e.id
                                                    : options.output_dir)};
      target_section[e.id] = std::move(target);
    }
    if (!names.empty()) {
      group_section[group.name] = {{"targets", std::move(names)}};
    }
  }
  if (!group_section.contains("default") && !group_section.empty()) {
    group_section["default"] = group_section.begin().value();
  }
  file["group"] = std::move(group_section);
  file["target"] = std::move(target_section);
  return file;
}

std::vector<std::string> bake_command(const std::string& file,
                                      const std::vector<std::string>& targets,
                                      const std::vector<std::string>& set) {
  // --progress plain: the log is a file, not a terminal.
  std::vector<std::string> argv = {"docker", "buildx",     "bake", "--file",
                                   file,     "--progress", "plain"};
  for (const std::string& s : set) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  argv.insert(argv.end(), targets.begin(), targets.end());
  return argv;
}

}  // namespace sagebuild::backend
