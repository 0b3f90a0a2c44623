#include "util/fs.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include <fmt/format.h>

namespace sagebuild::fs {
namespace {

std::string describe_errno() {
  return std::strerror(errno);
}

std::string temp_sibling_name(const std::filesystem::path& path) {
  std::random_device random;
  return fmt::format(".{}.tmp-{:08x}", path.filename().string(), random());
}

}  // namespace

Expected<Ok> move_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code ec;
  std::filesystem::rename(from, to, ec);
  if (!ec) return Ok{};
  if (ec != std::errc::cross_device_link) {
    return Error{fmt::format("cannot move {} to {}: {}", from.string(), to.string(), ec.message())};
  }
  // Copied under a temporary name and flushed (closed) before it takes its name: an
  // interruption or a full disk leaves no half-written `to`.
  const std::filesystem::path temp = to.parent_path() / temp_sibling_name(to);
  ec.clear();
  // Chunk by chunk with every write and the close checked, and the sizes compared at the end:
  // `out << in.rdbuf()` reports no error when a full disk stops it part-way, and
  // std::filesystem::copy_file reports one as "Input/output error", losing the cause.
  std::uint64_t copied = 0;
  int saved_errno = 0;  // the write's or the close's, before anything else can change errno
  {
    std::ifstream in(from, std::ios::binary);
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    std::vector<char> buffer(1 << 20);
    while (in && out) {
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      const std::streamsize got = in.gcount();
      if (got <= 0) break;
      errno = 0;
      out.write(buffer.data(), got);
      if (!out) saved_errno = errno;
      copied += static_cast<std::uint64_t>(got);
    }
    const bool read_all = in.eof() && !in.bad();
    errno = 0;
    out.close();
    if (out.fail() && !saved_errno) saved_errno = errno;
    if (!read_all || out.fail()) ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec) {
    std::error_code size_ec;
    const auto want = std::filesystem::file_size(from, size_ec);
    if (size_ec || copied != want || std::filesystem::file_size(temp, size_ec) != want || size_ec) {
      ec = std::make_error_code(std::errc::io_error);
    }
  }
  if (!ec) std::filesystem::rename(temp, to, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return Error{fmt::format("cannot copy {} into {}: {}", from.string(), to.parent_path().string(),
                             ec != std::errc::io_error ? ec.message()
                             : saved_errno             ? std::string(std::strerror(saved_errno))
                                                       : std::string("the copy came out short"))};
  }
  std::filesystem::remove(from, ec);
  return Ok{};
}

Expected<std::string> read_file(const std::filesystem::path& path, std::size_t limit) {
  // Opening a FIFO blocks until something writes to it, and a socket cannot be read as a file:
  // both are refused before the open. Devices (/dev/zero) are read up to the limit.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && (std::filesystem::is_fifo(status) || std::filesystem::is_socket(status))) {
    return Error{fmt::format("'{}' is a pipe or socket, not a file", path.string())};
  }
  if (!ec && std::filesystem::is_directory(status)) {
    return Error{fmt::format("'{}' is a folder, not a file", path.string())};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{fmt::format("cannot open '{}': {}", path.string(), describe_errno())};
  }
  // In chunks, so that memory follows what the file holds, not the limit.
  std::string content;
  std::vector<char> chunk(std::size_t{64} * 1024);
  while (content.size() <= limit) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    content.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (in.bad()) {
      return Error{fmt::format("cannot read '{}': {}", path.string(), describe_errno())};
    }
    if (in.eof()) break;
  }
  if (content.size() > limit) {
    return Error{fmt::format("'{}' is larger than {} KiB; that is not a file of this kind",
                             path.string(), limit / 1024)};
  }
  return content;
}

Expected<Ok> write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path directory =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::filesystem::path temp = directory / temp_sibling_name(path);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return Error{fmt::format("cannot create '{}': {}", temp.string(), describe_errno())};
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      const std::string reason = describe_errno();
      out.close();
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      return Error{fmt::format("cannot write '{}': {}", path.string(), reason)};
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return Error{fmt::format("cannot replace '{}': {}", path.string(), ec.message())};
  }
  return Ok{};
}

Expected<Ok> append_file(const std::filesystem::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) {
    return Error{
        fmt::format("cannot open '{}' for appending: {}", path.string(), describe_errno())};
  }
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.flush();
  if (!out) {
    return Error{fmt::format("cannot append to '{}': {}", path.string(), describe_errno())};
  }
  return Ok{};
}

std::filesystem::path find_upwards(const std::filesystem::path& start, std::string_view name) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(start, ec);
  while (!dir.empty()) {
    if (std::filesystem::exists(dir / name, ec)) {
      return dir;
    }
    if (dir == dir.root_path()) {
      break;
    }
    dir = dir.parent_path();
  }
  return {};
}

}  // namespace sagebuild::fs

namespace sagebuild::fs {

TempDir::TempDir(std::string_view purpose) {
  std::random_device random;
  const auto base = std::filesystem::temp_directory_path();
  // create_directory is false when the name exists: try again with another, never share one.
  for (;;) {
    path_ = base / fmt::format("{}-{:08x}", purpose, random());
    if (std::filesystem::create_directory(path_)) break;
  }
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path default_cache_dir() {
  for (const char* var : {"SAGEBUILD_CACHE_DIR"}) {
    if (const char* v = std::getenv(var); v && *v) return v;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "sagebuild";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "sagebuild";
  }
  return std::filesystem::temp_directory_path() / "sagebuild-cache";
}

}  // namespace sagebuild::fs
