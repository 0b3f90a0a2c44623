#include "util/sha256.h"

#include <fstream>
#include <vector>

namespace sagebuild {

Sha256Digest sha256(std::span<const std::uint8_t> data) {
  Sha256Hasher hasher;
  hasher.update(data);
  return hasher.finish();
}

Expected<FileDigest> sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot open " + path.string()};
  Sha256Hasher hasher;
  FileDigest result;
  std::vector<std::uint8_t> buffer(std::size_t{1} << 20);
  while (in) {
    in.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(buffer.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0) break;
    hasher.update(std::span(buffer.data(), n));
    result.size += n;
  }
  if (in.bad()) return Error{"cannot read " + path.string()};
  result.digest = hasher.finish();
  return result;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string base64url_nopad(std::span<const std::uint8_t> bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6)
      out += kAlphabet[(v >> shift) & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    std::uint32_t v = bytes[i] << 16;
    if (rest == 2) v |= bytes[i + 1] << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    if (rest == 2) out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

}  // namespace sagebuild
