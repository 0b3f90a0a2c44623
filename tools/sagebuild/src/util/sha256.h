// SHA-256 through OpenSSL (which uses the CPU's SHA extensions where present), and the
// URL-safe unpadded base64 that wheel RECORD files use for digests.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sagebuild {

using Sha256Digest = std::array<std::uint8_t, 32>;

Sha256Digest sha256(std::span<const std::uint8_t> data);
std::string to_hex(std::span<const std::uint8_t> bytes);

// RFC 4648 section 5 alphabet, no '=' padding: what PEP 376/427 RECORD rows hold.
std::string base64url_nopad(std::span<const std::uint8_t> bytes);

}  // namespace sagebuild
