#include "util/sha256.h"

#include <catch2/catch.hpp>

namespace sagebuild {
namespace {

std::span<const std::uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST_CASE("sha256 and the RECORD encoding", "[sha256]") {
  CHECK(to_hex(sha256(bytes("abc"))) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // hashlib.sha256(b"").digest() urlsafe-b64 without '=': what `wheel` writes for empty files
  CHECK(base64url_nopad(sha256(bytes(""))) == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
  CHECK(base64url_nopad(bytes("f")) == "Zg");
  CHECK(base64url_nopad(bytes("fo")) == "Zm8");
  CHECK(base64url_nopad(bytes("foo")) == "Zm9v");
  CHECK(base64url_nopad(bytes("\xfb\xff")) == "-_8");
}

}  // namespace
}  // namespace sagebuild
