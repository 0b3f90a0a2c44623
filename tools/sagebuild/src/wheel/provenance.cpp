#include "wheel/provenance.h"

#include <utility>

#include <fmt/format.h>

#include "util/json_text.h"

namespace sagebuild::wheel {
namespace {

constexpr std::size_t kMaxProvenanceList = 64;

}  // namespace

nlohmann::ordered_json Provenance::to_json() const {
  return {{"schema", schema},   {"sagebuild", sagebuild_version},
          {"commit", commit},   {"dirty", dirty},
          {"entry", entry},     {"package", package},
          {"version", version}, {"torch", torch},
          {"abi", abi},         {"cuda", cuda},
          {"python", python},   {"platform_tag", platform_tag},
          {"archs", archs},     {"flags", flags}};
}

Expected<Provenance> Provenance::parse(std::string_view text) {
  const auto doc = parse_json_bounded(text);
  if (doc.is_discarded() || !doc.is_object()) {
    return Error{std::string(kProvenanceFile) + " is not a JSON object"};
  }
  Provenance p;
  try {
    p.schema = doc.at("schema").get<int>();
    if (p.schema != 1) {
      return Error{fmt::format("{} has schema {}; this sagebuild reads schema 1", kProvenanceFile,
                               p.schema)};
    }
    p.sagebuild_version = doc.at("sagebuild").get<std::string>();
    p.commit = doc.value("commit", "");
    p.dirty = doc.value("dirty", false);
    p.entry = doc.value("entry", "");
    p.package = doc.at("package").get<std::string>();
    p.version = doc.at("version").get<std::string>();
    p.torch = doc.at("torch").get<std::string>();
    p.abi = doc.value("abi", "per-torch");
    if (p.abi != "per-torch" && p.abi != "per-torch-py3" && p.abi != "stable") {
      return Error{fmt::format("{} names the ABI '{}'; per-torch, per-torch-py3 or stable",
                               kProvenanceFile, p.abi)};
    }
    p.cuda = doc.at("cuda").get<std::string>();
    p.python = doc.at("python").get<std::string>();
    p.platform_tag = doc.at("platform_tag").get<std::string>();
    p.archs = doc.at("archs").get<std::vector<std::string>>();
    p.flags = doc.value("flags", std::vector<std::string>{});
    // A wheel's record of its own build: a few architectures and flags. A longer list is not
    // one (600,000 archs made 597,525 findings).
    for (const auto& [what, list] : {std::pair{"archs", &p.archs}, std::pair{"flags", &p.flags}}) {
      if (list->size() > kMaxProvenanceList) {
        return Error{fmt::format("{} lists {} {}, more than {}", kProvenanceFile, list->size(),
                                 what, kMaxProvenanceList)};
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{} is incomplete: {}", kProvenanceFile, e.what())};
  }
  return p;
}

}  // namespace sagebuild::wheel
