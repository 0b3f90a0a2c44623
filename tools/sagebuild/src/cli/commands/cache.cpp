#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "store/build_cache.h"
#include "toolchain/environment.h"
#include "util/fs.h"
#include "util/json_text.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

// sagebuild cache [list]: what the build cache holds, by size and last use.
// sagebuild cache prune: removes what a policy names (age, total size, or everything).
class CacheCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.fallthrough();  // --cache-dir may follow `list` or `prune`
    cmd.require_subcommand(0, 1);
    cmd.add_option("--cache-dir", cache_,
                   "the cache (default: $SAGEBUILD_CACHE_DIR, else $XDG_CACHE_HOME/sagebuild, "
                   "else ~/.cache/sagebuild)");
    CLI::App* list = cmd.add_subcommand("list", "each entry with its size and last use (default)");
    list->add_option("--format", format_, "table or json")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
    prune_ = cmd.add_subcommand(
        "prune", "remove entries unused for a while, or the least recently used past a size");
    prune_->add_option("--older-than", older_than_,
                       "remove entries unused for longer than this (30d, 12h, 2w)");
    prune_->add_option("--max-size", max_size_,
                       "then remove the least recently used until the cache fits (20G, 500M)");
    prune_->add_flag("--all", policy_.all, "remove every entry");
    prune_->add_flag("--dry-run", dry_run_, "say what would be removed; remove nothing");
  }

  int run() override {
    const stdfs::path cache = cache_.empty() ? fs::default_cache_dir() : stdfs::path(cache_);
    return prune_->parsed() ? prune(cache) : list(cache);
  }

 private:
  int list(const stdfs::path& cache) {
    const auto entries = store::BuildCache(cache).list(toolchain::shared_runtime_of);
    std::uint64_t total = 0;
    for (const auto& e : entries)
      total += e.bytes;
    if (format_ == "json") {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& e : entries) {
        list.push_back({{"name", e.name},
                        {"kind", e.kind},
                        {"bytes", e.bytes},
                        {"unused_seconds", e.age.count()},
                        {"incomplete", e.incomplete},
                        {"being_made", e.being_made}});
      }
      log_.result("{}\n", json_text(
                              nlohmann::ordered_json{
                                  {"cache", cache.string()}, {"bytes", total}, {"entries", list}},
                              2));
      return kSuccess;
    }
    if (entries.empty()) {
      log_.result("sagebuild: the cache {} is empty\n", cache.string());
      return kSuccess;
    }
    std::vector<std::vector<std::string>> rows;
    std::size_t left_over = 0, being_made = 0;
    for (const auto& e : entries) {
      left_over += e.incomplete && !e.being_made;
      being_made += e.being_made;
      const char* state = e.being_made ? " (being made)" : e.incomplete ? " (incomplete)" : "";
      rows.push_back({e.name + state, store::describe_size(e.bytes),
                      store::describe_age(e.age) + (e.age.count() >= 60 ? " ago" : "")});
    }
    print_table({"ENTRY", "SIZE", "LAST USED"}, rows);
    std::string notes;
    if (being_made) {
      notes += fmt::format("; {} being made by a running build", being_made);
    }
    if (left_over) {
      notes += fmt::format(
          "; {} incomplete: what an interrupted run left (`sagebuild cache "
          "prune` removes {})",
          left_over, left_over == 1 ? "it" : "them");
    }
    log_.result("sagebuild: {} in {} entr{} in {}{}\n", store::describe_size(total), entries.size(),
                entries.size() == 1 ? "y" : "ies", cache.string(), notes);
    return kSuccess;
  }

  int prune(const stdfs::path& cache) {
    if (!older_than_.empty()) {
      auto age = store::parse_age(older_than_);
      if (!age) throw CommandError{ErrorKind::usage, "--older-than: " + age.error().message};
      policy_.older_than = *age;
    }
    if (!max_size_.empty()) {
      auto size = store::parse_size(max_size_);
      if (!size) throw CommandError{ErrorKind::usage, "--max-size: " + size.error().message};
      policy_.max_bytes = *size;
    }
    const auto entries = store::BuildCache(cache).list(toolchain::shared_runtime_of);
    const auto doomed = store::BuildCache::plan_prune(entries, policy_);
    if (!policy_.all && !policy_.older_than && !policy_.max_bytes && doomed.empty()) {
      throw CommandError{ErrorKind::usage,
                         "say what to prune: --older-than AGE, --max-size SIZE or --all "
                         "(`sagebuild cache` lists the entries)"};
    }
    std::uint64_t freed = 0, total = 0;
    std::size_t removed = 0, left = 0;
    for (const auto& e : entries)
      total += e.bytes;
    for (const auto& e : doomed) {
      const std::string why = fmt::format("{}, unused for {}", store::describe_size(e.bytes),
                                          store::describe_age(e.age));
      if (dry_run_) {
        log_.info("would remove {} ({})\n", e.name, why);
        freed += e.bytes;
        ++removed;
        continue;
      }
      auto done = store::BuildCache::remove(e);
      if (!done) {
        log_.error("sagebuild: {}\n", done.error().message);
        ++left;
        continue;
      }
      log_.info("removed {} ({})\n", e.name, why);
      freed += e.bytes;
      ++removed;
    }
    log_.result("sagebuild: {} {} entr{}, {}; the cache now holds {}\n",
                dry_run_ ? "would remove" : "removed", removed, removed == 1 ? "y" : "ies",
                store::describe_size(freed), store::describe_size(total - freed));
    if (left) {
      throw CommandError{ErrorKind::build, fmt::format("{} entr{} could not be removed (see above)",
                                                       left, left == 1 ? "y" : "ies")};
    }
    return kSuccess;
  }

  std::string cache_;
  std::string format_ = "table";
  CLI::App* prune_ = nullptr;
  std::string older_than_, max_size_;
  store::PrunePolicy policy_;
  bool dry_run_ = false;
};

}  // namespace

std::unique_ptr<Command> make_cache_command(const Context& context) {
  return std::make_unique<CacheCommand>(context);
}

}  // namespace sagebuild::cli
