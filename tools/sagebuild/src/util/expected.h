// Expected<T>: a value or an Error, for functions whose failure the caller handles.
// std::expected is C++23; this is the small subset we use, on std::variant.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace sagebuild {

// What a failure is, for the command that reports it: its exit code comes from this and nothing
// else (cli/exit_codes.h: exit_code_for, the table of docs/cli.md). Set where the failure is
// understood; `unclassified` where a layer cannot tell (a file that cannot be written is the
// user's output in one command and a build's work folder in another): its caller says (as()).
enum class ErrorKind { unclassified, usage, config, build, verify, publish, interrupted, internal };

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::unclassified;

  // This error, of kind `otherwise` unless it already has one.
  Error as(ErrorKind otherwise) const& {
    return {message, kind == ErrorKind::unclassified ? otherwise : kind};
  }
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : storage_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : storage_(std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const { return storage_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(storage_); }
  const T& value() const& { return std::get<0>(storage_); }
  T&& value() && { return std::get<0>(std::move(storage_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(storage_); }

 private:
  std::variant<T, Error> storage_;
};

// For functions that return nothing on success.
struct Ok {};

}  // namespace sagebuild
