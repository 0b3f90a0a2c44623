// Sha256Hasher on Windows' Cryptography API: Next Generation (bcrypt.dll): no OpenSSL to build
// or ship on Windows.
#include <windows.h>
// windows.h first: bcrypt.h needs its types.
#include <bcrypt.h>
#include <limits>
#include <stdexcept>

#include "util/sha256.h"

namespace sagebuild {

struct Sha256Hasher::State {
  BCRYPT_HASH_HANDLE hash = nullptr;
  ~State() {
    if (hash != nullptr) BCryptDestroyHash(hash);
  }
};

namespace {

// The SHA-256 provider, opened once and kept for the process (CNG's algorithm handles may be
// shared by threads); nullptr when it cannot be opened.
BCRYPT_ALG_HANDLE sha256_provider() {
  static const BCRYPT_ALG_HANDLE provider = []() -> BCRYPT_ALG_HANDLE {
    BCRYPT_ALG_HANDLE handle = nullptr;
    if (!BCRYPT_SUCCESS(BCryptOpenAlgorithmProvider(&handle, BCRYPT_SHA256_ALGORITHM, nullptr, 0)))
      return nullptr;
    return handle;
  }();
  return provider;
}

}  // namespace

Sha256Hasher::Sha256Hasher() : state_(std::make_unique<State>()) {
  const BCRYPT_ALG_HANDLE provider = sha256_provider();
  if (provider == nullptr ||
      !BCRYPT_SUCCESS(BCryptCreateHash(provider, &state_->hash, nullptr, 0, nullptr, 0, 0))) {
    throw std::runtime_error("Windows CNG SHA-256 failed to start");
  }
}

Sha256Hasher::~Sha256Hasher() = default;

void Sha256Hasher::update(std::span<const std::uint8_t> data) {
  // BCryptHashData takes a ULONG length: feed larger spans in pieces.
  constexpr std::size_t kMaxPiece = std::numeric_limits<ULONG>::max();
  while (!data.empty()) {
    const std::size_t piece = data.size() < kMaxPiece ? data.size() : kMaxPiece;
    // The input is only read; the API's parameter is not const-qualified.
    auto* bytes = const_cast<PUCHAR>(reinterpret_cast<const UCHAR*>(data.data()));
    if (!BCRYPT_SUCCESS(BCryptHashData(state_->hash, bytes, static_cast<ULONG>(piece), 0))) {
      throw std::runtime_error("Windows CNG SHA-256 failed");
    }
    data = data.subspan(piece);
  }
}

Sha256Digest Sha256Hasher::finish() {
  Sha256Digest digest{};
  if (!BCRYPT_SUCCESS(
          BCryptFinishHash(state_->hash, digest.data(), static_cast<ULONG>(digest.size()), 0))) {
    throw std::runtime_error("Windows CNG SHA-256 failed");
  }
  return digest;
}

}  // namespace sagebuild
