#include "vcs/git.h"

#include <charconv>
#include <memory>

#include <fmt/format.h>
#include <git2.h>

namespace sagebuild::vcs {
namespace {

// libgit2 keeps global state (allocators, TLS); one init for the life of the process.
struct Libgit2 {
  Libgit2() { git_libgit2_init(); }
  ~Libgit2() { git_libgit2_shutdown(); }
};

void ensure_libgit2() {
  static const Libgit2 instance;
}

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Repository = std::unique_ptr<git_repository, Deleter<git_repository_free>>;
using Reference = std::unique_ptr<git_reference, Deleter<git_reference_free>>;
using Object = std::unique_ptr<git_object, Deleter<git_object_free>>;
using StatusList = std::unique_ptr<git_status_list, Deleter<git_status_list_free>>;
using DescribeResult = std::unique_ptr<git_describe_result, Deleter<git_describe_result_free>>;
using Revwalk = std::unique_ptr<git_revwalk, Deleter<git_revwalk_free>>;

Error libgit2_error(std::string_view what) {
  const ::git_error* e = git_error_last();
  return Error{fmt::format("git: {}: {}", what, e && e->message ? e->message : "unknown error")};
}

// "v2.2.0-5-gabc123" (long format) -> {"v2.2.0", 5}. Read from the right: tags may contain '-'.
std::optional<NearestTag> parse_describe(std::string_view s) {
  const auto g = s.rfind("-g");
  if (g == std::string_view::npos) return std::nullopt;
  const auto dash = s.rfind('-', g - 1);
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  int distance = 0;
  const std::string_view digits = s.substr(dash + 1, g - dash - 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), distance);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return NearestTag{std::string(s.substr(0, dash)), distance};
}

Expected<std::optional<NearestTag>> nearest_tag(git_object* head, const std::string& prefix) {
  git_describe_options options = GIT_DESCRIBE_OPTIONS_INIT;
  options.describe_strategy = GIT_DESCRIBE_TAGS;  // lightweight tags count too
  const std::string pattern = prefix + "*";
  options.pattern = pattern.c_str();
  git_describe_result* raw = nullptr;
  const int rc = git_describe_commit(&raw, head, &options);
  if (rc < 0) {
    // "No tag can describe it" is GIT_ENOTFOUND, but "no tag matches the pattern at all" is a
    // plain -1 of class DESCRIBE: both mean no release tag in this history.
    const ::git_error* e = git_error_last();
    if (rc == GIT_ENOTFOUND || (e && e->klass == GIT_ERROR_DESCRIBE)) {
      return std::optional<NearestTag>();
    }
    return libgit2_error("describe");
  }
  DescribeResult result(raw);
  git_describe_format_options format = GIT_DESCRIBE_FORMAT_OPTIONS_INIT;
  format.always_use_long_format = 1;
  git_buf buf = GIT_BUF_INIT;
  if (git_describe_format(&buf, result.get(), &format) < 0) return libgit2_error("describe");
  const std::string text(buf.ptr, buf.size);
  git_buf_dispose(&buf);
  auto tag = parse_describe(text);
  if (!tag) return Error{fmt::format("git: cannot read describe output '{}'", text)};
  return std::optional<NearestTag>(*tag);
}

}  // namespace

Expected<std::optional<GitState>> read_git_state(const std::filesystem::path& path,
                                                 const std::string& tag_prefix) {
  ensure_libgit2();
  git_repository* raw_repo = nullptr;
  const int open = git_repository_open_ext(&raw_repo, path.string().c_str(), 0, nullptr);
  if (open == GIT_ENOTFOUND) return std::optional<GitState>();
  if (open < 0) return libgit2_error(fmt::format("opening the repository at {}", path.string()));
  Repository repo(raw_repo);

  GitState state;
  if (const char* workdir = git_repository_workdir(repo.get())) state.workdir = workdir;
  state.shallow = git_repository_is_shallow(repo.get()) == 1;
  git_reference* raw_head = nullptr;
  const int head_rc = git_repository_head(&raw_head, repo.get());
  if (head_rc == GIT_EUNBORNBRANCH || head_rc == GIT_ENOTFOUND) {
    return Error{
        fmt::format("git: the repository at {} has no commit yet", state.workdir.string())};
  }
  if (head_rc < 0) return libgit2_error("reading HEAD");
  Reference head(raw_head);
  state.detached = git_repository_head_detached(repo.get()) == 1;
  if (!state.detached) state.branch = git_reference_shorthand(head.get());
  git_object* raw_commit = nullptr;
  if (git_reference_peel(&raw_commit, head.get(), GIT_OBJECT_COMMIT) < 0) {
    return libgit2_error("reading HEAD's commit");
  }
  Object commit(raw_commit);
  const git_oid* oid = git_object_id(commit.get());
  state.commit = git_oid_tostr_s(oid);
  state.commit_time =
      static_cast<std::int64_t>(git_commit_time(reinterpret_cast<git_commit*>(commit.get())));

  // Tracked files only: untracked files are not part of what was built from this commit.
  git_status_options status_options = GIT_STATUS_OPTIONS_INIT;
  status_options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  status_options.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  git_status_list* raw_status = nullptr;
  if (git_status_list_new(&raw_status, repo.get(), &status_options) < 0) {
    return libgit2_error("reading the status of the working tree");
  }
  StatusList status(raw_status);
  const std::size_t changed = git_status_list_entrycount(status.get());
  state.dirty = changed > 0;
  for (std::size_t i = 0; i < changed && state.dirty_paths.size() < 5; ++i) {
    const git_status_entry* e = git_status_byindex(status.get(), i);
    const git_diff_delta* delta = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
    if (delta && delta->new_file.path) state.dirty_paths.emplace_back(delta->new_file.path);
  }

  auto tag = nearest_tag(commit.get(), tag_prefix);
  if (!tag && !state.shallow) return tag.error();
  // A shallow clone may lack the commits between HEAD and a fetched tag: no tag, not an error.
  if (tag) state.tag = *tag;

  if (!state.shallow) {
    git_revwalk* raw_walk = nullptr;
    if (git_revwalk_new(&raw_walk, repo.get()) < 0) return libgit2_error("walking history");
    Revwalk walk(raw_walk);
    if (git_revwalk_push(walk.get(), oid) < 0) return libgit2_error("walking history");
    int count = 0;
    git_oid next;
    int rc = 0;
    while ((rc = git_revwalk_next(&next, walk.get())) == 0)
      ++count;
    if (rc != GIT_ITEROVER) return libgit2_error("walking history");
    state.commits_in_history = count;
  }
  return std::optional<GitState>(std::move(state));
}

Expected<std::string> read_file_at_revision(const std::filesystem::path& file,
                                            const std::string& revision, std::size_t max_bytes) {
  ensure_libgit2();
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(file, ec).lexically_normal();
  git_repository* raw_repo = nullptr;
  const int open =
      git_repository_open_ext(&raw_repo, absolute.parent_path().string().c_str(), 0, nullptr);
  if (open == GIT_ENOTFOUND) {
    return Error{fmt::format("{} is not in a git repository", file.string())};
  }
  if (open < 0) return libgit2_error("opening the repository");
  Repository repo(raw_repo);
  const char* workdir = git_repository_workdir(repo.get());
  if (!workdir) return Error{"git: a bare repository has no working tree to compare with"};
  const std::filesystem::path root = std::filesystem::path(workdir).lexically_normal();
  std::filesystem::path relative = absolute.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") {
    return Error{fmt::format("{} is outside the repository at {}", file.string(), root.string())};
  }
  const std::string spec = revision + ":" + relative.generic_string();
  git_object* raw = nullptr;
  if (git_revparse_single(&raw, repo.get(), spec.c_str()) < 0) {
    git_object* commit = nullptr;
    if (git_revparse_single(&commit, repo.get(), revision.c_str()) < 0) {
      return Error{fmt::format("git: unknown revision '{}'", revision)};
    }
    git_object_free(commit);
    return Error{fmt::format("git: {} has no {}", revision, relative.generic_string())};
  }
  Object object(raw);
  if (git_object_type(object.get()) != GIT_OBJECT_BLOB) {
    return Error{fmt::format("git: {} is not a file at {}", relative.generic_string(), revision)};
  }
  const auto* blob = reinterpret_cast<const git_blob*>(object.get());
  const auto size = static_cast<std::size_t>(git_blob_rawsize(blob));
  if (size > max_bytes) {
    return Error{fmt::format("git: {} at {} is {} bytes, over the limit of {}",
                             relative.generic_string(), revision, size, max_bytes)};
  }
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob)), size);
}

}  // namespace sagebuild::vcs
