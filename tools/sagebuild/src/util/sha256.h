// SHA-256 through OpenSSL (which uses the CPU's SHA extensions where present), and the
// URL-safe unpadded base64 that wheel RECORD files use for digests.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace sagebuild {

using Sha256Digest = std::array<std::uint8_t, 32>;

Sha256Digest sha256(std::span<const std::uint8_t> data);
std::string to_hex(std::span<const std::uint8_t> bytes);

struct FileDigest {
  Sha256Digest digest;
  std::uint64_t size = 0;
};

// The digest of a file, read in chunks (a wheel is never held in memory whole).
Expected<FileDigest> sha256_file(const std::filesystem::path& path);

// RFC 4648 section 5 alphabet, no '=' padding: what PEP 376/427 RECORD rows hold.
std::string base64url_nopad(std::span<const std::uint8_t> bytes);

}  // namespace sagebuild
