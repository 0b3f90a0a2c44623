// Sha256Hasher on OpenSSL's libcrypto (every platform but Windows).
#include <openssl/evp.h>
#include <stdexcept>

#include "util/sha256.h"

namespace sagebuild {

struct Sha256Hasher::State {
  EVP_MD_CTX* context = nullptr;
  ~State() { EVP_MD_CTX_free(context); }
};

Sha256Hasher::Sha256Hasher() : state_(std::make_unique<State>()) {
  state_->context = EVP_MD_CTX_new();
  if (state_->context == nullptr ||
      EVP_DigestInit_ex(state_->context, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 failed to start");
  }
}

Sha256Hasher::~Sha256Hasher() = default;

void Sha256Hasher::update(std::span<const std::uint8_t> data) {
  if (EVP_DigestUpdate(state_->context, data.data(), data.size()) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 failed");
  }
}

Sha256Digest Sha256Hasher::finish() {
  Sha256Digest digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(state_->context, digest.data(), &length) != 1 || length != digest.size()) {
    throw std::runtime_error("OpenSSL SHA-256 failed");
  }
  return digest;
}

}  // namespace sagebuild
