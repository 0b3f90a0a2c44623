#include "backend/docker/bake.h"

#include <cstdlib>
#include <filesystem>
#include <set>

#include "backend/docker/docker_image.h"
#include "backend/wheel_finish.h"
#include "util/text.h"

namespace sagebuild::backend {

std::string host_ca_bundle() {
  if (const char* file = std::getenv("SSL_CERT_FILE"); file && *file) return file;
  const char* system_bundle = "/etc/ssl/certs/ca-certificates.crt";
  std::error_code ec;
  return std::filesystem::is_regular_file(system_bundle, ec) ? system_bundle : "";
}

std::string host_compile_cache_remote_env() {
  const char* remote = std::getenv("CCACHE_REMOTE_STORAGE");
  return remote && *remote ? "CCACHE_REMOTE_STORAGE" : "";
}

Expected<nlohmann::ordered_json> make_bake_file(const matrix::Matrix& m,
                                                const std::vector<BakeGroup>& groups,
                                                const BakeOptions& options) {
  auto set = docker_image_set(m, options.images);
  if (!set) return set.error();
  std::vector<std::string> problems;
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
      auto image = docker_image_for(m, e, **set);
      if (!image) {
        problems.push_back(e.id + ": " + image.error().message);
        continue;
      }
      nlohmann::ordered_json target;
      target["context"] = options.context;
      target["dockerfile"] = options.dockerfile;
      target["target"] = options.stage;
      target["platforms"] = {e.docker_platform};
      // Exactly the ARGs docker/Dockerfile.linux declares: the entry's torch, CUDA and
      // architectures come from matrix.yaml inside the build (`sagebuild build --entry`).
      target["args"] = {
          {"BASE_IMAGE", image->base},
          {"CUDA_SOURCE", matrix::docker_toolkit_name(image->toolkit)},
          {"PYTHON_SOURCE", docker_python_name(image->python_source)},
          {"PYTHON_IMAGE", image->python_image.empty() ? "scratch" : image->python_image},
          {"PYTHON_VERSION", image->python.str()},
          {"SAGEBUILD_ENTRY", e.id},
      };
      if (!image->toolkit_suite.empty()) target["args"]["CUDA_SUITE"] = image->toolkit_suite;
      if (!options.prebuilt_sagebuild.empty()) {
        target["args"]["SAGEBUILD_PREBUILT"] = options.prebuilt_sagebuild;
      }
      nlohmann::ordered_json secrets = nlohmann::ordered_json::array();
      if (!options.ca_bundle.empty()) secrets.push_back("id=ca-bundle,src=" + options.ca_bundle);
      if (!options.compile_cache_remote_env.empty()) {
        secrets.push_back("id=ccache-remote,env=" + options.compile_cache_remote_env);
      }
      if (!secrets.empty()) target["secret"] = std::move(secrets);
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
  if (!problems.empty()) return Error{text::join(problems, "\n")};
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
