#include "registry/attestation.h"

#include <string>

#include <catch2/catch.hpp>

#include "util/fs.h"

namespace sagebuild::registry {
namespace {

namespace stdfs = std::filesystem;

const std::string kFile = "sageattention-2.2.0-2100.130-py3-none-manylinux_2_28_x86_64.whl";
const std::string kDigest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

std::string base64(const std::string& in) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const auto v = static_cast<unsigned>(static_cast<unsigned char>(in[i]) << 16 |
                                         static_cast<unsigned char>(in[i + 1]) << 8 |
                                         static_cast<unsigned char>(in[i + 2]));
    for (int s = 18; s >= 0; s -= 6)
      out += abc[(v >> s) & 63];
  }
  if (const std::size_t rest = in.size() - i; rest > 0) {
    unsigned v = static_cast<unsigned>(static_cast<unsigned char>(in[i]) << 16);
    if (rest == 2) v |= static_cast<unsigned>(static_cast<unsigned char>(in[i + 1]) << 8);
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    out += rest == 2 ? abc[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string statement(const std::string& subjects, const std::string& padding = "") {
  return R"({"_type": "https://in-toto.io/Statement/v1", "subject": )" + subjects +
         R"(, "predicateType": "https://docs.pypi.org/attestations/publish/v1", "predicate": null})" +
         padding;
}

std::string subject(const std::string& name, const std::string& digest) {
  return R"([{"name": ")" + name + R"(", "digest": {"sha256": ")" + digest + R"("}}])";
}

std::string attestation(const std::string& encoded_statement, int version = 1) {
  return R"({"version": )" + std::to_string(version) +
         R"(, "verification_material": {"certificate": "MIIC", "transparency_entries": []},)"
         R"( "envelope": {"statement": ")" +
         encoded_statement + R"(", "signature": "MEUC"}})";
}

struct Dist {
  fs::TempDir dir{"sagebuild-attestation"};
  stdfs::path wheel = dir.path() / kFile;
  Expected<std::string> field(const std::string& text) {
    REQUIRE(fs::write_file_atomic(attestation_path(wheel), text));
    return attestations_field(wheel, kDigest);
  }
};

TEST_CASE("an attestation naming the file and its digest is sent as the signer wrote it",
          "[attestation]") {
  Dist d;
  CHECK(attestation_path(d.wheel).filename() == kFile + ".publish.attestation");
  // Statements of every length modulo 3: base64 with no, one and two '=' of padding.
  for (const std::string padding : {"", " ", "  "}) {
    const std::string text = attestation(base64(statement(subject(kFile, kDigest), padding)));
    const auto field = d.field(text + "\n");
    REQUIRE(field);
    CHECK(*field == "[" + text + "]");
  }
  // The digest's case does not matter.
  CHECK(d.field(attestation(base64(statement(
      subject(kFile, "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"))))));
}

TEST_CASE("an attestation of another file, another build or no statement is refused, saying why",
          "[attestation]") {
  Dist d;
  const auto refused = [&](const std::string& text, const std::string& why) {
    const auto field = d.field(text);
    REQUIRE_FALSE(field);
    CHECK_THAT(field.error().message,
               Catch::Contains("not a PEP 740 attestation of " + kFile) && Catch::Contains(why));
  };
  const std::string good = base64(statement(subject(kFile, kDigest)));
  refused(attestation(base64(statement(subject("sageattention-2.2.0-py3-none-any.whl", kDigest)))),
          "it attests 'sageattention-2.2.0-py3-none-any.whl'");
  refused(attestation(base64(statement(subject(kFile, std::string(64, 'a'))))),
          "it attests sha256 " + std::string(64, 'a'));
  refused(attestation(base64(statement(R"([{"name": "a"}, {"name": "b"}])"))),
          "exactly one subject");
  refused(attestation(base64(statement("[]"))), "exactly one subject");
  refused(attestation(good, 2), "\"version\" is not 1");
  refused("[1, 2]", "not a JSON object");
  refused("{\"version\": 1", "not a JSON object");
  refused(R"({"version": 1, "envelope": {"statement": "e30=", "signature": "x"}})",
          "no \"verification_material\"");
  refused(R"({"version": 1, "verification_material": {"certificate": "x"}})", "no \"envelope\"");
  refused(attestation(base64(R"({"_type": "https://in-toto.io/Statement/v0.1", "subject": []})")),
          "not an in-toto statement");
  // Fields of the wrong type are refusals with a reason, never an exception.
  refused(R"({"version": "1", "verification_material": {"certificate": "x"}, "envelope": )"
          R"({"statement": "e30=", "signature": "x"}})",
          "\"version\" is not 1");
  refused(attestation(base64(statement(R"([{"name": 7, "digest": {"sha256": 5}}])"))),
          "it attests");
  refused(attestation(base64(statement(R"([{"name": "x", "digest": "sha256"}])"))), "it attests");
  refused(attestation(base64(R"({"_type": 5, "subject": []})")), "not an in-toto statement");
  refused(R"({"version": 1, "verification_material": {"certificate": "x"}, "envelope": )"
          R"({"statement": 5, "signature": "x"}})",
          "no \"envelope\"");
  // Not base64: a character outside the alphabet, '=' inside, a length not a multiple of 4.
  refused(attestation("e30*"), "not base64");
  refused(attestation("e3=0"), "not base64");
  refused(attestation(good.substr(1)), "not base64");
}

TEST_CASE("a labelled copy's attestation is found where the delivered copies are",
          "[attestation]") {
  Dist d;
  fs::TempDir delivered{"sagebuild-delivered"};
  const std::string text = attestation(base64(statement(subject(kFile, kDigest))));
  REQUIRE(fs::write_file_atomic(delivered.path() / (kFile + ".publish.attestation"), text));
  CHECK(attestation_path(d.wheel, {{}, delivered.path()}) ==
        delivered.path() / (kFile + ".publish.attestation"));
  const auto field = attestations_field(d.wheel, kDigest, {delivered.path()});
  REQUIRE(field);
  CHECK(*field == "[" + text + "]");
  // Beside the file first.
  REQUIRE(fs::write_file_atomic(attestation_path(d.wheel), text));
  CHECK(attestation_path(d.wheel, {delivered.path()}) == attestation_path(d.wheel));
}

TEST_CASE("a missing or oversized attestation file is an error naming it", "[attestation]") {
  Dist d;
  auto missing = attestations_field(d.wheel, kDigest);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message,
             Catch::StartsWith("no attestation " + attestation_path(d.wheel).string()) &&
                 Catch::Contains("pypi-attestations sign"));
  const auto huge = d.field(std::string(2u << 20, ' '));
  REQUIRE_FALSE(huge);
  CHECK_THAT(huge.error().message, Catch::Contains(attestation_path(d.wheel).string()));
}

}  // namespace
}  // namespace sagebuild::registry
