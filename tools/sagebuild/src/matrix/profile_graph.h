// The profiles of a matrix as a graph of 'from' edges, indexed once: every question that walks
// it (which profile a name means, which profiles build on themselves, an order in which each
// profile comes after its bases) is answered in time linear in the number of profiles and
// edges, and without recursion, so a matrix.yaml of thousands of chained profiles costs
// milliseconds and no stack.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "matrix/model.h"

namespace sagebuild::matrix {

class ProfileGraph {
 public:
  explicit ProfileGraph(const Matrix& m);

  // The index of the profile named `name` in m.profiles, or npos.
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::size_t find(std::string_view name) const;

  // The indices of the profiles each profile builds on (unknown names left out).
  const std::vector<std::size_t>& bases(std::size_t profile) const { return bases_[profile]; }
  // Whether a 'from' of the profile names no profile.
  bool has_unknown_base(std::size_t profile) const { return unknown_base_[profile]; }

  // Every profile, each after the profiles it builds on (the members of a cycle in any order).
  const std::vector<std::size_t>& bases_first() const { return order_; }

  // Whether the profile is on a cycle of 'from', or builds on a profile that is.
  bool on_cycle(std::size_t profile) const { return on_cycle_[profile]; }
  bool reaches_cycle(std::size_t profile) const { return reaches_cycle_[profile]; }

  // The shortest path of names from a profile on a cycle back to itself ("a", "b", "a").
  std::vector<std::string> cycle_through(std::size_t profile) const;

 private:
  const Matrix& m_;
  std::unordered_map<std::string_view, std::size_t> index_;
  std::vector<std::vector<std::size_t>> bases_;
  std::vector<bool> unknown_base_;
  std::vector<std::size_t> order_;
  std::vector<std::size_t> component_;
  std::vector<bool> on_cycle_, reaches_cycle_;
};

}  // namespace sagebuild::matrix
