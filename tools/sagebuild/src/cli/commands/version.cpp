#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "github/output.h"
#include "util/json_text.h"
#include "util/text.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class VersionCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("--format", format_,
                   "text, short (the version alone), json, or github ($GITHUB_OUTPUT)")
        ->check(CLI::IsMember({"text", "short", "json", "github"}))
        ->capture_default_str();
    cmd.add_flag("--check-tag", check_tag_,
                 "fail unless this is a release tag build whose tag equals the version");
  }

  int run() override { return version(format_, check_tag_); }

 private:
  int version(const std::string& format, bool check_tag) {
    const LoadedMatrix m = load();
    const SourceVersion v = source_version(m);
    const matrix::VersionSource& policy = m.matrix.package.version;
    const bool tagged = v.resolved.kind == vcs::BuildKind::release_tag;
    if (check_tag && !tagged) {
      const char* ref = std::getenv("GITHUB_REF");
      throw CommandError{
          ErrorKind::config,
          fmt::format("--check-tag: this is not a release tag build (GITHUB_REF {}; HEAD {}); "
                      "release builds run from a {}X.Y.Z tag",
                      ref && *ref ? ref : "unset",
                      v.git && v.git->tag && v.git->tag->distance == 0
                          ? "is at " + v.git->tag->name
                          : fmt::format("has no {}* tag", policy.tag_prefix),
                      policy.tag_prefix)};
    }
    nlohmann::ordered_json doc = {
        {"package", m.matrix.package.name},
        {"version", v.resolved.version},
        {"file_version", m.package_version},
        {"version_file", policy.file},
        {"release_tag", tagged ? nlohmann::ordered_json(v.resolved.tag) : nullptr},
        {"tag_origin", tagged ? nlohmann::ordered_json(v.resolved.tag_origin) : nullptr},
        {"git", nullptr}};
    if (v.git) {
      const vcs::GitState& g = *v.git;
      doc["git"] = {{"commit", g.commit},
                    {"commit_time", g.commit_time},
                    {"dirty", g.dirty},
                    {"dirty_paths", g.dirty_paths},
                    {"branch", g.detached ? nlohmann::ordered_json(nullptr)
                                          : nlohmann::ordered_json(g.branch)},
                    {"shallow", g.shallow},
                    {"nearest_tag", g.tag ? nlohmann::ordered_json(g.tag->name) : nullptr},
                    {"distance", g.tag ? nlohmann::ordered_json(g.tag->distance) : nullptr}};
    }
    if (format == "json") {
      log_.result("{}\n", json_text(doc, 2));
      return kSuccess;
    }
    if (format == "github") {
      for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
               {"version", v.resolved.version},
               {"release_tag", tagged ? v.resolved.tag : ""},
               {"commit", v.git ? v.git->commit : ""}}) {
        if (auto set = github::set_output(name, value); !set) {
          throw CommandError(set.error().as(ErrorKind::usage));
        }
      }
      log_.result("sagebuild: version={} written to $GITHUB_OUTPUT\n", v.resolved.version);
      return kSuccess;
    }
    if (format == "short") {
      log_.result("{}\n", v.resolved.version);
      return kSuccess;
    }
    std::vector<std::vector<std::string>> rows = {
        {"package", m.matrix.package.name},
        {"version", v.resolved.version},
        {"source", fmt::format("{} says {}", policy.file, m.package_version)},
        {"build",
         tagged ? fmt::format("release tag {} (from {})", v.resolved.tag, v.resolved.tag_origin)
                : "not a release tag"}};
    if (v.git) {
      const vcs::GitState& g = *v.git;
      rows.push_back({"commit", fmt::format("{}{}", g.commit,
                                            g.detached ? " (detached HEAD)" : " on " + g.branch)});
      rows.push_back({"tree", g.dirty ? "dirty: " + text::join(g.dirty_paths, ", ") : "clean"});
      rows.push_back(
          {"nearest tag", g.tag ? fmt::format("{}, {} commit{} before HEAD", g.tag->name,
                                              g.tag->distance, g.tag->distance == 1 ? "" : "s")
                                : fmt::format("none matching {}*{}", policy.tag_prefix,
                                              g.shallow ? " (shallow clone)" : "")});
    } else {
      rows.push_back({"commit", "not a git checkout"});
    }
    print_table({"", ""}, rows);
    return kSuccess;
  }

  std::string format_ = "text";
  bool check_tag_ = false;
};

}  // namespace

std::unique_ptr<Command> make_version_command(const Context& context) {
  return std::make_unique<VersionCommand>(context);
}

}  // namespace sagebuild::cli
