#include "matrix/profile_graph.h"

#include <algorithm>
#include <deque>

namespace sagebuild::matrix {

ProfileGraph::ProfileGraph(const Matrix& m) : m_(m) {
  const std::size_t n = m.profiles.size();
  for (std::size_t i = 0; i < n; ++i)
    index_.emplace(m.profiles[i].name, i);  // the first of a duplicated name, as find_profile
  bases_.resize(n);
  unknown_base_.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& name : m.profiles[i].from) {
      const std::size_t base = find(name.value);
      if (base == npos) {
        unknown_base_[i] = true;
      } else {
        bases_[i].push_back(base);
      }
    }
  }
  // Tarjan's strongly connected components, with an explicit stack. Components come out bases
  // first (a component is finished only after every component it reaches), which is the order.
  constexpr std::size_t unvisited = npos;
  std::vector<std::size_t> number(n, unvisited), low(n, 0), stack;
  std::vector<bool> on_stack(n, false);
  component_.assign(n, npos);
  on_cycle_.assign(n, false);
  std::size_t counter = 0, components = 0;
  struct Frame {
    std::size_t node, next_base;
  };
  for (std::size_t root = 0; root < n; ++root) {
    if (number[root] != unvisited) continue;
    std::vector<Frame> walk{{root, 0}};
    number[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!walk.empty()) {
      Frame& f = walk.back();
      if (f.next_base < bases_[f.node].size()) {
        const std::size_t base = bases_[f.node][f.next_base++];
        if (number[base] == unvisited) {
          number[base] = low[base] = counter++;
          stack.push_back(base);
          on_stack[base] = true;
          walk.push_back({base, 0});
        } else if (on_stack[base]) {
          low[f.node] = std::min(low[f.node], number[base]);
        }
        continue;
      }
      const std::size_t node = f.node;
      walk.pop_back();
      if (!walk.empty()) low[walk.back().node] = std::min(low[walk.back().node], low[node]);
      if (low[node] != number[node]) continue;
      std::vector<std::size_t> members;
      std::size_t member;
      do {
        member = stack.back();
        stack.pop_back();
        on_stack[member] = false;
        component_[member] = components;
        members.push_back(member);
      } while (member != node);
      ++components;
      const bool cyclic = members.size() > 1 || std::find(bases_[node].begin(), bases_[node].end(),
                                                          node) != bases_[node].end();
      for (const std::size_t x : members) {
        on_cycle_[x] = cyclic;
        order_.push_back(x);
      }
    }
  }
  reaches_cycle_.assign(n, false);
  for (const std::size_t i : order_) {
    reaches_cycle_[i] =
        on_cycle_[i] || std::any_of(bases_[i].begin(), bases_[i].end(),
                                    [&](std::size_t b) { return reaches_cycle_[b]; });
  }
}

std::size_t ProfileGraph::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? npos : it->second;
}

std::vector<std::string> ProfileGraph::cycle_through(std::size_t profile) const {
  if (!on_cycle_[profile]) return {};
  // Breadth first inside the profile's component, back to the profile.
  std::vector<std::size_t> came_from(bases_.size(), npos);
  std::deque<std::size_t> queue{profile};
  while (!queue.empty()) {
    const std::size_t node = queue.front();
    queue.pop_front();
    for (const std::size_t base : bases_[node]) {
      if (component_[base] != component_[profile]) continue;
      if (base == profile) {
        std::vector<std::string> path{m_.profiles[profile].name};
        for (std::size_t at = node; at != profile; at = came_from[at])
          path.push_back(m_.profiles[at].name);
        std::reverse(path.begin() + 1, path.end());
        path.push_back(m_.profiles[profile].name);
        return path;
      }
      if (came_from[base] == npos) {
        came_from[base] = node;
        queue.push_back(base);
      }
    }
  }
  return {};
}

}  // namespace sagebuild::matrix
