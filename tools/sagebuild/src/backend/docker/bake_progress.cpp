#include "backend/docker/bake_progress.h"

#include <charconv>

namespace sagebuild::backend {
namespace {

// A step's command on one short console line: runs of blanks (a RUN's continued lines) as one.
std::string shortened(std::string_view text) {
  constexpr std::size_t kMax = 72;
  std::string out;
  for (const char c : text) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  if (out.size() <= kMax) return out;
  return out.substr(0, kMax - 3) + "...";
}

}  // namespace

std::optional<BakeStep> BakeProgressReader::feed(std::string_view line) {
  if (line.size() < 2 || line[0] != '#') return std::nullopt;
  int vertex = 0;
  const char* begin = line.data() + 1;
  const char* end = line.data() + line.size();
  const auto [after, ec] = std::from_chars(begin, end, vertex);
  if (ec != std::errc() || after == end || *after != ' ') return std::nullopt;
  std::string_view rest(after + 1, static_cast<std::size_t>(end - after - 1));
  if (rest.starts_with('[')) {
    // "[target stage k/n] COMMAND": a step of one target starts.
    const auto close = rest.find("] ");
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view label = rest.substr(1, close - 1);
    const auto space = label.find(' ');
    const std::string target(label.substr(0, space));
    if (!targets_.contains(target) || space == std::string_view::npos) return std::nullopt;
    vertex_target_[vertex] = target;
    return BakeStep{
        target, std::string(label.substr(space + 1)) + ": " + shortened(rest.substr(close + 2))};
  }
  // "41.07 [target] text": a step's output; the inner sagebuild's progress lines name the entry.
  const auto known = vertex_target_.find(vertex);
  if (known == vertex_target_.end()) return std::nullopt;
  const auto space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view output = rest.substr(space + 1);
  const std::string prefix = "[" + known->second + "] ";
  if (!output.starts_with(prefix)) return std::nullopt;
  return BakeStep{known->second, "in the image: " + shortened(output.substr(prefix.size()))};
}

}  // namespace sagebuild::backend
