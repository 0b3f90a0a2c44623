#include "matrix/profile_graph.h"

#include <catch2/catch.hpp>

namespace sagebuild::matrix {
namespace {

Matrix with_profiles(std::vector<std::pair<std::string, std::vector<std::string>>> profiles) {
  Matrix m;
  for (auto& [name, from] : profiles) {
    Profile p;
    p.name = name;
    for (auto& base : from)
      p.from.push_back({base, {}});
    m.profiles.push_back(std::move(p));
  }
  return m;
}

TEST_CASE("profiles come after their bases; cycles are found with their path", "[profiles]") {
  const Matrix m = with_profiles({{"top", {"mid", "ghost"}},
                                  {"mid", {"base"}},
                                  {"base", {}},
                                  {"a", {"b"}},
                                  {"b", {"c"}},
                                  {"c", {"a"}},
                                  {"self", {"self"}},
                                  {"above", {"a"}}});
  const ProfileGraph g(m);
  std::vector<std::size_t> position(m.profiles.size());
  for (std::size_t i = 0; i < g.bases_first().size(); ++i)
    position[g.bases_first()[i]] = i;
  REQUIRE(g.bases_first().size() == m.profiles.size());
  CHECK(position[g.find("base")] < position[g.find("mid")]);
  CHECK(position[g.find("mid")] < position[g.find("top")]);
  CHECK(g.has_unknown_base(g.find("top")));
  CHECK(g.find("ghost") == ProfileGraph::npos);
  CHECK_FALSE(g.on_cycle(g.find("top")));
  CHECK(g.cycle_through(g.find("a")) == std::vector<std::string>{"a", "b", "c", "a"});
  CHECK(g.cycle_through(g.find("self")) == std::vector<std::string>{"self", "self"});
  CHECK_FALSE(g.on_cycle(g.find("above")));
  CHECK(g.reaches_cycle(g.find("above")));
  CHECK_FALSE(g.reaches_cycle(g.find("top")));
}

TEST_CASE("a chain of 100,000 profiles is walked without recursion", "[profiles]") {
  std::vector<std::pair<std::string, std::vector<std::string>>> chain{{"p0", {}}};
  for (int i = 1; i < 100'000; ++i)
    chain.push_back({"p" + std::to_string(i), {"p" + std::to_string(i - 1)}});
  const Matrix m = with_profiles(std::move(chain));
  const ProfileGraph g(m);
  CHECK(g.bases_first().front() == g.find("p0"));
  CHECK(g.bases_first().back() == g.find("p99999"));
}

}  // namespace
}  // namespace sagebuild::matrix
