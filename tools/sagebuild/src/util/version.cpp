#include "util/version.h"

#include <algorithm>
#include <charconv>

#include "util/text.h"

namespace sagebuild {

std::optional<Version> Version::parse(std::string_view text) {
  Version version;
  version.text_ = std::string(text);
  for (const std::string& piece : text::split(text, '.')) {
    const bool digits_only =
        std::all_of(piece.begin(), piece.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits_only || piece.empty() || piece.size() > 6 ||
        (piece.size() > 1 && piece[0] == '0')) {
      return std::nullopt;
    }
    int value = 0;
    const auto [end, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), value);
    if (ec != std::errc{} || end != piece.data() + piece.size()) {
      return std::nullopt;
    }
    version.parts_.push_back(value);
  }
  if (version.parts_.empty() || version.parts_.size() > 4) {
    return std::nullopt;
  }
  return version;
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  const std::size_t n = std::max(parts_.size(), other.parts_.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (const auto c = part(i) <=> other.part(i); c != 0) {
      return c;
    }
  }
  return std::strong_ordering::equal;
}

std::optional<VersionConstraint> VersionConstraint::parse(std::string_view text) {
  VersionConstraint constraint;
  constraint.text_ = std::string(text::trim(text));
  for (const std::string& raw : text::split(text, ',')) {
    std::string_view clause = text::trim(raw);
    Op op;
    // Two-character operators first, so ">=" is not read as ">".
    if (clause.starts_with(">=")) {
      op = Op::greater_equal;
    } else if (clause.starts_with("<=")) {
      op = Op::less_equal;
    } else if (clause.starts_with("==")) {
      op = Op::equal;
    } else if (clause.starts_with("!=")) {
      op = Op::not_equal;
    } else if (clause.starts_with(">")) {
      op = Op::greater;
    } else if (clause.starts_with("<")) {
      op = Op::less;
    } else {
      return std::nullopt;
    }
    clause.remove_prefix(op == Op::greater || op == Op::less ? 1 : 2);
    auto version = Version::parse(text::trim(clause));
    if (!version) {
      return std::nullopt;
    }
    constraint.clauses_.push_back({op, *version});
  }
  return constraint;
}

bool VersionConstraint::allows(const Version& version) const {
  for (const Clause& clause : clauses_) {
    const auto c = version <=> clause.version;
    bool ok = false;
    switch (clause.op) {
      case Op::less:
        ok = c < 0;
        break;
      case Op::less_equal:
        ok = c <= 0;
        break;
      case Op::greater:
        ok = c > 0;
        break;
      case Op::greater_equal:
        ok = c >= 0;
        break;
      case Op::equal:
        ok = c == 0;
        break;
      case Op::not_equal:
        ok = c != 0;
        break;
    }
    if (!ok) {
      return false;
    }
  }
  return true;
}

}  // namespace sagebuild
