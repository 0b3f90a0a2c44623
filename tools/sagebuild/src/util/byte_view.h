// Bounds-checked reads of little-endian binary formats held in memory (ELF, PE, fat binaries):
// every read says whether it was inside the data, so a hostile file can only produce an error.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

namespace sagebuild {

class ByteView {
 public:
  explicit ByteView(std::span<const std::uint8_t> data) : data_(data) {}

  std::size_t size() const { return data_.size(); }
  bool has(std::uint64_t offset, std::uint64_t count) const {
    return offset <= data_.size() && count <= data_.size() - offset;
  }

  // The T at `offset`, or nothing when it does not fit. Little-endian hosts only (x86-64, arm64).
  template <typename T>
  std::optional<T> get(std::uint64_t offset) const {
    if (!has(offset, sizeof(T))) return std::nullopt;
    T value;
    std::memcpy(&value, data_.data() + offset, sizeof(T));
    return value;
  }

  // A NUL-terminated string starting at `offset` that ends before `limit`.
  std::optional<std::string> c_string(std::uint64_t offset, std::uint64_t limit) const {
    if (limit > data_.size() || offset >= limit) return std::nullopt;
    const auto* start = reinterpret_cast<const char*>(data_.data() + offset);
    const std::size_t max = static_cast<std::size_t>(limit - offset);
    const std::size_t length = strnlen(start, max);
    if (length == max) return std::nullopt;
    return std::string(start, length);
  }

  // Only after has(offset, count).
  std::span<const std::uint8_t> slice(std::uint64_t offset, std::uint64_t count) const {
    return data_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(count));
  }

 private:
  std::span<const std::uint8_t> data_;
};

}  // namespace sagebuild
