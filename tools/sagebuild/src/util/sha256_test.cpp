#include "util/sha256.h"

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "util/fs.h"

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

// The platform's library behind Sha256Hasher (OpenSSL, or CNG on Windows) against FIPS 180-2's
// vectors, whole and fed in uneven pieces, and sha256_file across its 1 MiB read chunks.
TEST_CASE("sha256 whole, in pieces and from a file agree with FIPS 180-2", "[sha256]") {
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(to_hex(sha256(bytes(two_blocks))) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1'000'000, 'a');
  const std::string million_a = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  CHECK(to_hex(sha256(bytes(million))) == million_a);
  for (const std::size_t piece :
       {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65537}}) {
    Sha256Hasher hasher;
    for (std::size_t at = 0; at < million.size(); at += piece) {
      hasher.update(bytes(std::string_view(million).substr(at, piece)));
    }
    CHECK(to_hex(hasher.finish()) == million_a);
  }

  fs::TempDir dir;
  std::vector<std::uint8_t> data((std::size_t{5} << 20) / 2 + 7);  // 2.5 MiB and a bit
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::uint8_t>((i * 131) ^ (i >> 9));
  {
    std::ofstream out(dir.path() / "data.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(data.size()));
  }
  auto file = sha256_file(dir.path() / "data.bin");
  REQUIRE(file);
  CHECK(file->size == data.size());
  CHECK(file->digest == sha256(data));
  CHECK_FALSE(sha256_file(dir.path() / "missing.bin"));
}

}  // namespace
}  // namespace sagebuild
