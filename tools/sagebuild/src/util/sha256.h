// SHA-256, and the URL-safe unpadded base64 that wheel RECORD files use for digests. The digest
// itself comes from the platform's library, which uses the CPU's SHA extensions where present:
// OpenSSL's libcrypto (sha256_openssl.cpp) or Windows' CNG (sha256_cng.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace sagebuild {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Incremental SHA-256. A failure of the platform's library (which has no reason to fail on
// memory it was given) throws std::runtime_error.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void update(std::span<const std::uint8_t> data);
  // The digest of everything given to update(); the hasher is spent afterwards.
  Sha256Digest finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

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
