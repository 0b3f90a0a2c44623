// Reading matrix.yaml's YAML into model values with located diagnostics: the generic part of
// the loader (mappings with known keys, free-form names, values and lists, versions), which the
// loader (loader.cpp: one function per section of the file) and the cross-reference checks
// (validator.cpp) share. Internal to matrix/.
#pragma once

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "matrix/diagnostics.h"
#include "matrix/model.h"
#include "util/text.h"

namespace sagebuild::matrix {

using Strings = std::vector<std::string>;

// "a value", "a list", "a mapping" or "nothing": what a node is, for messages.
inline const char* kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return "a value";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "nothing";
  }
}

struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

struct Fields {
  std::vector<Field> items;
  SourceLocation location;  // of the mapping itself
  // key -> position in items: a mapping of 100,000 keys is checked for duplicates in linear time.
  std::unordered_map<std::string, std::size_t> index;
  const Field* get(const std::string& key) const {
    const auto it = index.find(key);
    return it == index.end() ? nullptr : &items[it->second];
  }
  void add(Field f) {
    index.emplace(f.key, items.size());
    items.push_back(std::move(f));
  }
};

// Reads YAML nodes into model values, recording a diagnostic for everything that does not fit.
class YamlReader {
 public:
  YamlReader(std::string file, Diagnostics& diagnostics)
      : file_(std::move(file)), diagnostics_(diagnostics) {}

  SourceLocation where(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) return {};
    int length = 1;
    if (node.IsScalar()) {
      // yaml-cpp tags quoted scalars "!": underline the quotes too.
      const std::size_t quotes = node.Tag() == "!" ? 2 : 0;
      length = static_cast<int>(std::max<std::size_t>(1, node.Scalar().size() + quotes));
    }
    return {mark.line + 1, mark.column + 1, length};
  }

  // An error that leaves a hole in the model (a missing or mistyped value): cross-reference
  // checks would then report noise, so they are skipped.
  void error(SourceLocation location, std::string message, std::string note = {}) {
    model_complete_ = false;
    diagnostics_.push_back({file_, location, std::move(message), std::move(note)});
  }

  // An error that leaves the model whole (an unknown or repeated key that was skipped), so that
  // every other problem of the file can still be reported in the same run.
  void error_keep_going(SourceLocation location, std::string message, std::string note = {}) {
    diagnostics_.push_back({file_, location, std::move(message), std::move(note)});
  }

  bool model_complete() const { return model_complete_; }

  // A mapping with string keys: reports unknown keys (with a suggestion), duplicate keys and
  // missing required keys. Returns nothing when `node` is not a mapping at all.
  std::optional<Fields> fields(const YAML::Node& node, std::string_view what,
                               const Strings& allowed, const Strings& required = {}) {
    if (!node.IsMap()) {
      error(where(node), fmt::format("{} must be a mapping, found {}", what, kind_name(node)));
      return std::nullopt;
    }
    Fields result;
    result.location = where(node);
    std::set<std::string> misspelt;  // required keys that an unknown key probably meant
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) {
        error(where(key), fmt::format("keys of {} must be plain names", what));
        continue;
      }
      const std::string& name = key.Scalar();
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        error_keep_going(
            where(key),
            fmt::format("unknown key '{}' in {}{}", name, what, text::did_you_mean(name, allowed)),
            "allowed keys: " + text::join(allowed, ", "));
        if (auto meant = text::closest_match(name, allowed)) misspelt.insert(*meant);
        continue;
      }
      if (const Field* first = result.get(name)) {
        error_keep_going(
            where(key), fmt::format("duplicate key '{}' in {} (first given on line {})", name, what,
                                    where(first->key_node).line));
        continue;
      }
      result.add({name, key, it->second});
    }
    for (const std::string& name : required) {
      if (result.get(name)) continue;
      if (misspelt.count(name)) {
        model_complete_ = false;  // already reported as the misspelling it probably is
        continue;
      }
      error(result.location, fmt::format("{} is missing the required key '{}'", what, name));
    }
    return result;
  }

  // A mapping whose keys are free-form names (versions, profile names): only duplicates checked.
  std::optional<Fields> named_items(const YAML::Node& node, std::string_view what) {
    if (!node.IsMap()) {
      error(where(node), fmt::format("{} must be a mapping, found {}", what, kind_name(node)));
      return std::nullopt;
    }
    Fields result;
    result.location = where(node);
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar() || key.Scalar().empty()) {
        error(where(key), fmt::format("names in {} must be non-empty values", what));
        continue;
      }
      check_not_a_float(key);
      if (const Field* first = result.get(key.Scalar())) {
        error_keep_going(where(key), fmt::format("'{}' is given twice in {} (first on line {})",
                                                 key.Scalar(), what, where(first->key_node).line));
        continue;
      }
      result.add({key.Scalar(), key, it->second});
    }
    return result;
  }

  std::optional<std::string> scalar(const YAML::Node& node, std::string_view what) {
    if (!node.IsScalar()) {
      error(where(node), fmt::format("{} must be a single value, found {}", what, kind_name(node)));
      return std::nullopt;
    }
    return node.Scalar();
  }

  // A value or a list of values; "python: 3.12" and "python: [3.11, 3.12]" both read as a list.
  // An unquoted 3.10 is the number 3.1 to every YAML reader but this one (GitHub's, Python's):
  // a version written so would mean another version to the tools that read matrix.yaml's
  // outputs and to anyone who reads the file with them. Refused where it is, with the quoting.
  void check_not_a_float(const YAML::Node& node) {
    if (node.Tag() != "?") return;  // quoted ("!") or tagged: a string already
    const std::string& text = node.Scalar();
    const std::size_t dot = text.find('.');
    const bool digits_dot_digits = dot != std::string::npos && dot > 0 && text.size() - dot >= 3 &&
                                   text.find_first_not_of("0123456789.") == std::string::npos &&
                                   text.find('.', dot + 1) == std::string::npos;
    if (digits_dot_digits && text.back() == '0') {
      error_keep_going(where(node),
                       fmt::format("unquoted {} is the number {} to YAML readers: write \"{}\"",
                                   text, text.substr(0, text.find_last_not_of('0') + 1), text),
                       "versions are strings in matrix.yaml; quote every one");
    }
  }

  std::optional<std::vector<Located<std::string>>> scalars(const YAML::Node& node,
                                                           std::string_view what) {
    std::vector<Located<std::string>> out;
    if (node.IsScalar()) {
      check_not_a_float(node);
      out.push_back({node.Scalar(), where(node)});
      return out;
    }
    if (!node.IsSequence()) {
      error(where(node),
            fmt::format("{} must be a value or a list of values, found {}", what, kind_name(node)));
      return std::nullopt;
    }
    bool ok = true;
    for (const YAML::Node& item : node) {
      if (!item.IsScalar()) {
        error(where(item),
              fmt::format("items of {} must be single values, found {}", what, kind_name(item)));
        ok = false;
        continue;
      }
      check_not_a_float(item);
      out.push_back({item.Scalar(), where(item)});
    }
    if (!ok) return std::nullopt;
    return out;
  }

  std::optional<Version> version(const std::string& text, SourceLocation location,
                                 std::string_view what) {
    auto parsed = Version::parse(text);
    if (!parsed) {
      error(location, fmt::format("'{}' is not a valid {} (expected numbers like {})", text, what,
                                  what == "Python version" ? "3.12" : "12.9 or 2.8.0"));
    }
    return parsed;
  }

 private:
  std::string file_;
  Diagnostics& diagnostics_;
  bool model_complete_ = true;
};

}  // namespace sagebuild::matrix
