#include "registry/attestation.h"

#include <array>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "util/fs.h"
#include "util/json_text.h"
#include "util/text.h"

namespace sagebuild::registry {
namespace {

constexpr std::size_t kMaxAttestationBytes = 1u << 20;  // real ones are ~10 KB
constexpr const char* kStatementType = "https://in-toto.io/Statement/v1";

// RFC 4648 base64 (standard alphabet, '=' padding required), strictly: nullopt on any other
// character, misplaced padding or a length that is not a multiple of 4.
std::optional<std::string> base64_decode(std::string_view in) {
  static const std::array<std::int8_t, 256> table = [] {
    std::array<std::int8_t, 256> t{};
    t.fill(-1);
    const std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (std::size_t i = 0; i < alphabet.size(); ++i)
      t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
    return t;
  }();
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    // '=' only at the end of the last quantum, at most two of them.
    std::size_t pad = 0;
    if (i + 4 == in.size() && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const std::int8_t d =
          k >= 4 - pad ? std::int8_t{0} : table[static_cast<unsigned char>(in[i + k])];
      if (d < 0) return std::nullopt;
      v = (v << 6) | static_cast<std::uint32_t>(d);
    }
    out += static_cast<char>((v >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(v & 0xff);
  }
  return out;
}

}  // namespace

std::filesystem::path attestation_path(const std::filesystem::path& distribution,
                                       const std::vector<std::filesystem::path>& also_in) {
  std::filesystem::path beside = distribution;
  beside += ".publish.attestation";
  std::error_code ec;
  if (std::filesystem::is_regular_file(beside, ec)) return beside;
  for (const std::filesystem::path& dir : also_in) {
    if (dir.empty()) continue;
    std::filesystem::path there = dir / (distribution.filename().string() + ".publish.attestation");
    if (std::filesystem::is_regular_file(there, ec)) return there;
  }
  return beside;
}

Expected<std::string> attestations_field(const std::filesystem::path& distribution,
                                         const std::string& sha256_hex,
                                         const std::vector<std::filesystem::path>& also_in) {
  const std::filesystem::path path = attestation_path(distribution, also_in);
  const std::string file = distribution.filename().string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    std::string elsewhere;
    for (const std::filesystem::path& dir : also_in) {
      if (!dir.empty()) elsewhere += ", " + (dir / "").string();
    }
    return Error{fmt::format(
        "no attestation {}{}: sign the file as it is uploaded (`pypi-attestations sign`, with a "
        "Sigstore identity such as a GitHub workflow's OIDC token; for labelled files, the "
        "copies `--delivered-dir` keeps)",
        path.string(), elsewhere.empty() ? "" : " (nor in " + elsewhere.substr(2) + ")")};
  }
  auto text = fs::read_file(path, kMaxAttestationBytes);
  if (!text) return Error{fmt::format("{}: {}", path.string(), text.error().message)};
  const auto bad = [&](const std::string& why) {
    return Error{fmt::format("{}: not a PEP 740 attestation of {}: {}", path.string(), file, why)};
  };
  const auto attestation = parse_json_bounded(*text);
  if (attestation.is_discarded() || !attestation.is_object()) return bad("not a JSON object");
  if (json_get<std::int64_t>(attestation, "version") != 1) return bad("its \"version\" is not 1");
  const auto material = attestation.find("verification_material");
  if (material == attestation.end() || !material->is_object() ||
      !material->contains("certificate")) {
    return bad("no \"verification_material\" with a certificate");
  }
  const auto envelope = attestation.find("envelope");
  if (envelope == attestation.end() || !envelope->is_object() || !envelope->contains("signature") ||
      !(*envelope)["statement"].is_string()) {
    return bad("no \"envelope\" with a statement and a signature");
  }
  const auto statement_text = base64_decode((*envelope)["statement"].get<std::string>());
  if (!statement_text) return bad("its statement is not base64");
  const auto statement = parse_json_bounded(*statement_text);
  if (statement.is_discarded() || !statement.is_object() ||
      json_get<std::string>(statement, "_type") != kStatementType) {
    return bad(fmt::format("its statement is not an in-toto statement ({})", kStatementType));
  }
  const auto subjects = statement.find("subject");
  if (subjects == statement.end() || !subjects->is_array() || subjects->size() != 1 ||
      !(*subjects)[0].is_object()) {
    return bad("its statement does not name exactly one subject");
  }
  const auto& subject = (*subjects)[0];
  const std::string named = json_or<std::string>(subject, "name", "");
  const auto digest = subject.find("digest");
  const std::string attested = digest != subject.end() && digest->is_object()
                                   ? text::ascii_lower(json_or<std::string>(*digest, "sha256", ""))
                                   : "";
  if (named != file) {
    return bad(
        fmt::format("it attests '{}' (a file attested before it was renamed or labelled? "
                    "attest the file as uploaded)",
                    named));
  }
  if (attested != text::ascii_lower(sha256_hex)) {
    return bad(
        fmt::format("it attests sha256 {}, the file is {} (an attestation of another "
                    "build of the same name)",
                    attested.empty() ? "(none)" : attested, sha256_hex));
  }
  // The signer's bytes as they are, in the array the upload API takes.
  return "[" + std::string(text::trim(*text)) + "]";
}

}  // namespace sagebuild::registry
