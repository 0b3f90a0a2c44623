// Dotted release numbers as matrix.yaml uses them ("2.8.0", "12.9", "3.10"), compared
// numerically, and constraints on them (">=12.8, <13.0").
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sagebuild {

class Version {
 public:
  // Accepts one to four dot-separated decimal numbers without leading zeros ("3.10", "12.9.1").
  static std::optional<Version> parse(std::string_view text);

  const std::string& str() const { return text_; }
  int part(std::size_t index) const { return index < parts_.size() ? parts_[index] : 0; }
  std::size_t size() const { return parts_.size(); }
  int major() const { return part(0); }
  int minor() const { return part(1); }
  int patch() const { return part(2); }

  // Missing trailing parts compare as zero: 12.8 == 12.8.0.
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }

 private:
  std::string text_;
  std::vector<int> parts_;
};

// A conjunction of comparisons, written ">=12.8" or ">=9.0, <13.0".
class VersionConstraint {
 public:
  static std::optional<VersionConstraint> parse(std::string_view text);

  bool allows(const Version& version) const;
  const std::string& str() const { return text_; }

 private:
  enum class Op { less, less_equal, greater, greater_equal, equal, not_equal };
  struct Clause {
    Op op;
    Version version;
  };
  std::string text_;
  std::vector<Clause> clauses_;
};

}  // namespace sagebuild
