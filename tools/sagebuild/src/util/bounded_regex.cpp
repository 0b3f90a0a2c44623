#include "util/bounded_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <fmt/format.h>

namespace sagebuild {

struct BoundedRegex::Compiled {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  ~Compiled() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return "unknown error";
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

Expected<BoundedRegex> BoundedRegex::compile(std::string_view pattern) {
  auto compiled = std::make_shared<Compiled>();
  int error = 0;
  PCRE2_SIZE offset = 0;
  compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                 PCRE2_MULTILINE, &error, &offset, nullptr);
  if (!compiled->code) {
    return Error{fmt::format("{} at character {}", pcre2_message(error), offset + 1)};
  }
  compiled->context = pcre2_match_context_create(nullptr);
  if (!compiled->context) return Error{"cannot allocate a match context"};
  pcre2_set_match_limit(compiled->context, kMatchLimit);
  pcre2_set_depth_limit(compiled->context, kMatchLimit);
  pcre2_set_heap_limit(compiled->context, 64 * 1024);  // KiB
  BoundedRegex regex;
  regex.compiled_ = std::move(compiled);
  return regex;
}

int BoundedRegex::capture_groups() const {
  std::uint32_t count = 0;
  pcre2_pattern_info(compiled_->code, PCRE2_INFO_CAPTURECOUNT, &count);
  return static_cast<int>(count);
}

Expected<std::optional<std::string>> BoundedRegex::first_group(std::string_view subject) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr), &pcre2_match_data_free);
  if (!match) return Error{"cannot allocate match data"};
  const int rc = pcre2_match(compiled_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), 0, 0, match.get(), compiled_->context);
  if (rc == PCRE2_ERROR_NOMATCH) return std::optional<std::string>();
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT) {
    return Error{fmt::format(
        "the regular expression needs more than {} steps on a {}-character line (a pattern "
        "like '(x+)+' backtracks without end); simplify it",
        kMatchLimit, subject.size())};
  }
  if (rc < 0) return Error{pcre2_message(rc)};
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
  if (rc < 2 || ovector[2] == PCRE2_UNSET) return std::optional<std::string>(std::string());
  return std::optional<std::string>(
      std::string(subject.substr(ovector[2], ovector[3] - ovector[2])));
}

}  // namespace sagebuild
