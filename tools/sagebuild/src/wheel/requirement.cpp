#include "wheel/requirement.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "wheel/pep440.h"

namespace sagebuild::wheel {
namespace {

// packaging's marker variables (its tokenizer's VARIABLE), longest spellings first.
constexpr std::array<std::string_view, 20> kMarkerVariables = {"platform_python_implementation",
                                                               "platform.python_implementation",
                                                               "python_full_version",
                                                               "implementation_version",
                                                               "python_implementation",
                                                               "implementation_name",
                                                               "dependency_groups",
                                                               "platform_release",
                                                               "platform_machine",
                                                               "platform.machine",
                                                               "platform_version",
                                                               "platform.version",
                                                               "platform_system",
                                                               "python_version",
                                                               "sys_platform",
                                                               "sys.platform",
                                                               "os_name",
                                                               "os.name",
                                                               "extras",
                                                               "extra"};

// Nested parentheses in a marker, at most: bounds the recursion of the reader below.
constexpr int kMaxMarkerDepth = 32;

bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// A recursive-descent reader of packaging's grammar (packaging/_parser.py), refusing what it
// refuses; it only checks, it builds nothing.
class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  std::optional<std::string> requirement() {
    ws();
    if (!identifier()) return fail("a requirement starts with a project name");
    ws();
    if (peek('[')) {
      ++at_;
      ws();
      if (!peek(']')) {
        do {
          ws();
          if (!identifier()) return fail("an extra's name");
          ws();
        } while (take(','));
      }
      if (!take(']')) return fail("']' to close the extras");
      ws();
    }
    if (take('@')) {
      ws();
      const std::size_t start = at_;
      while (at_ < s_.size() && s_[at_] != ' ' && s_[at_] != '\t')
        ++at_;
      if (at_ == start) return fail("a URL after '@'");
      const bool space = ws();
      if (at_ == s_.size()) return std::nullopt;
      if (!space || !take(';')) return fail("whitespace and ';' after the URL");
      return marker_then_end();
    }
    if (take('(')) {
      ws();
      if (auto e = specifiers()) return e;
      ws();
      if (!take(')')) return fail("')' to close the version specifiers");
    } else if (auto e = specifiers()) {
      return e;
    }
    ws();
    if (at_ == s_.size()) return std::nullopt;
    if (!take(';')) return fail("',' or ';' or the end after the version specifier");
    return marker_then_end();
  }

 private:
  std::optional<std::string> fail(std::string_view expected) const {
    return fmt::format("expected {} at character {}", expected, at_ + 1);
  }
  bool peek(char c) const { return at_ < s_.size() && s_[at_] == c; }
  bool take(char c) {
    if (!peek(c)) return false;
    ++at_;
    return true;
  }
  bool take(std::string_view word) {
    if (s_.substr(at_).starts_with(word)) {
      at_ += word.size();
      return true;
    }
    return false;
  }
  // A keyword ("and", "in") as a whole word.
  bool keyword(std::string_view word) {
    if (!s_.substr(at_).starts_with(word)) return false;
    const std::size_t end = at_ + word.size();
    if ((at_ > 0 && is_word(s_[at_ - 1])) || (end < s_.size() && is_word(s_[end]))) return false;
    at_ = end;
    return true;
  }
  bool ws() {
    const std::size_t start = at_;
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t'))
      ++at_;
    return at_ > start;
  }
  // [A-Za-z0-9][A-Za-z0-9._-]* ending at a word boundary, as packaging's IDENTIFIER.
  bool identifier() {
    if (at_ >= s_.size() || !std::isalnum(static_cast<unsigned char>(s_[at_]))) return false;
    std::size_t end = at_;
    while (end < s_.size() && (is_word(s_[end]) || s_[end] == '.' || s_[end] == '-'))
      ++end;
    while (end > at_ && !is_word(s_[end - 1]))  // back to the last word character (\b)
      --end;
    at_ = end;
    return true;
  }

  std::optional<std::string> specifiers() {
    const char* ops[] = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
    bool first = true;
    while (true) {
      const std::size_t save = at_;
      if (!first) {
        ws();
        if (!take(',')) {
          at_ = save;
          return std::nullopt;
        }
        ws();
      }
      std::string_view op;
      for (const char* o : ops) {
        if (take(std::string_view(o))) {
          op = o;
          break;
        }
      }
      if (op.empty()) {
        if (!first) return fail("a version specifier after ','");
        at_ = save;
        return std::nullopt;  // no specifier at all
      }
      ws();
      const std::size_t start = at_;
      while (at_ < s_.size() && std::string_view(" \t,;)").find(s_[at_]) == std::string_view::npos)
        ++at_;
      if (auto e = version_error(op, s_.substr(start, at_ - start))) {
        return fmt::format("'{}{}' is not a version specifier: {}", op,
                           s_.substr(start, at_ - start), *e);
      }
      first = false;
    }
  }

  // The rules of packaging.specifiers.Specifier for one operator and its version.
  static std::optional<std::string> version_error(std::string_view op, std::string_view v) {
    if (v.empty()) return "no version";
    if (op == "===") return std::nullopt;  // arbitrary equality: any text
    const bool wildcard = v.ends_with(".*");
    if (wildcard && op != "==" && op != "!=") return "'.*' is only for == and !=";
    const std::string_view base = wildcard ? v.substr(0, v.size() - 2) : v;
    if (base.find_first_of(" \t") != std::string_view::npos) return "white space inside";
    const auto parsed = parse_pep440(base);
    if (!parsed) return "not a PEP 440 version";
    if (parsed->has_local && op != "==" && op != "!=") return "a local label with this operator";
    if (wildcard && (parsed->has_local ||
                     base.find_first_of("abcdefghijklmnopqrstuvwxyz+") != std::string_view::npos)) {
      return "'.*' after a release number only";
    }
    if (op == "~=" && std::count(base.begin(), base.end(), '.') < 1) {
      return "'~=' needs at least two release numbers";
    }
    return std::nullopt;
  }

  std::optional<std::string> marker_then_end() {
    ws();
    if (auto e = marker(0)) return e;
    ws();
    if (at_ != s_.size()) return fail("the end of the marker");
    return std::nullopt;
  }

  std::optional<std::string> marker(int depth) {
    do {
      if (auto e = marker_atom(depth)) return e;
    } while (boolean_operator());
    return std::nullopt;
  }

  bool boolean_operator() {
    const std::size_t save = at_;
    ws();
    if (keyword("and") || keyword("or")) return true;
    at_ = save;
    return false;
  }

  std::optional<std::string> marker_atom(int depth) {
    ws();
    if (take('(')) {
      if (depth >= kMaxMarkerDepth) return fail("fewer nested parentheses");
      ws();
      if (auto e = marker(depth + 1)) return e;
      ws();
      if (!take(')')) return fail("')' in the marker");
      ws();
      return std::nullopt;
    }
    Value lhs, rhs;
    if (!marker_value(lhs)) return fail("a marker variable or a quoted string");
    ws();
    std::string_view op;
    if (keyword("in")) {
      op = "in";
    } else if (keyword("not")) {
      ws();
      if (!keyword("in")) return fail("'in' after 'not'");
      op = "not in";
    } else {
      for (const char* o : {"===", "==", "~=", "!=", "<=", ">=", "<", ">"}) {
        if (take(std::string_view(o))) {
          op = o;
          break;
        }
      }
      if (op.empty()) return fail("a marker operator");
    }
    ws();
    if (!marker_value(rhs)) return fail("a marker variable or a quoted string");
    ws();
    if (auto why = unevaluable(lhs, op, rhs)) return std::string(*why);
    return std::nullopt;
  }

  // One side of a marker comparison: a variable's name, or a quoted string's text.
  struct Value {
    bool variable = false;
    std::string_view text;
  };

  bool marker_value(Value& value) {
    if (peek('\'') || peek('"')) {
      const char quote = s_[at_];
      const std::size_t close = s_.find(quote, at_ + 1);
      if (close == std::string_view::npos) return false;
      value = {false, s_.substr(at_ + 1, close - at_ - 1)};
      at_ = close + 1;
      return true;
    }
    for (const std::string_view v : kMarkerVariables) {
      if (keyword(v)) {
        value = {true, v};
        return true;
      }
    }
    return false;
  }

  // What packaging parses but cannot evaluate for an installed distribution's metadata (pip
  // then fails on the wheel): a comparison must set one variable against one string; 'extras'
  // and 'dependency_groups' exist only in lock files; '~=' needs a version of two or more parts
  // on the string side and a version on the variable side.
  static std::optional<std::string_view> unevaluable(const Value& lhs, std::string_view op,
                                                     const Value& rhs) {
    if (lhs.variable == rhs.variable) {
      return lhs.variable ? "a marker compares two variables (packaging compares the second's name)"
                          : "a marker compares two strings (packaging evaluates neither)";
    }
    const Value& variable = lhs.variable ? lhs : rhs;
    const Value& literal = lhs.variable ? rhs : lhs;
    if (variable.text == "extras" || variable.text == "dependency_groups") {
      return "'extras' and 'dependency_groups' markers are for lock files; packaging cannot "
             "evaluate them in a wheel's metadata";
    }
    // A version operator with a string that makes a valid specifier compares as versions:
    // packaging raises on a variable whose value is not one (os_name, platform_release, ...).
    const bool version_variable = variable.text == "python_version" ||
                                  variable.text == "python_full_version" ||
                                  variable.text == "implementation_version";
    std::string_view version = literal.text;
    while (!version.empty() && version.front() == ' ')
      version.remove_prefix(1);
    if (version.ends_with(".*")) version.remove_suffix(2);
    const bool is_version = parse_pep440(version).has_value();
    if (!version_variable && op != "in" && op != "not in" &&
        (op == "===" || op == "~=" || is_version)) {
      return "a marker compares a variable that is not a version with a version operator and "
             "value (packaging raises on it)";
    }
    if (op == "~=" &&
        (!lhs.variable || !is_version || std::count(version.begin(), version.end(), '.') < 1 ||
         literal.text.ends_with(".*") || version.find('+') != std::string_view::npos)) {
      return "'~=' needs a version of two or more parts without a local label on the right "
             "(packaging cannot evaluate it otherwise)";
    }
    return std::nullopt;
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

}  // namespace

std::optional<std::string> requirement_error(std::string_view text) {
  return Reader(text).requirement();
}

}  // namespace sagebuild::wheel
