#include "wheel/zip_archive.h"

#include <fstream>
#include <libdeflate.h>
#include <random>

#include <catch2/catch.hpp>

namespace sagebuild::wheel {
namespace {

// Builds small ZIP files byte by byte, so each test can state exactly what is in the archive.
struct ZipBuilder {
  struct Item {
    std::string name, local_name;
    std::string data;
    std::uint32_t crc;
    std::uint32_t declared_size;
    std::uint16_t method = 0;
    std::uint32_t compressed_size;
    std::string central_extra, local_extra;
  };
  std::vector<Item> items;
  std::string comment;

  // An Info-ZIP Unicode Path extra field (0x7075, version 1) naming `unicode`, its CRC taken of
  // `crc_of` (the header's name, when the field is meant to be honoured).
  static std::string unicode_path(const std::string& unicode, const std::string& crc_of) {
    std::string field;
    u16(field, 0x7075);
    u16(field, static_cast<std::uint16_t>(5 + unicode.size()));
    field.push_back(1);
    u32(field, libdeflate_crc32(0, crc_of.data(), crc_of.size()));
    return field + unicode;
  }

  ZipBuilder& add(std::string name, std::string data) {
    const auto crc = libdeflate_crc32(0, data.data(), data.size());
    const auto size = static_cast<std::uint32_t>(data.size());
    items.push_back({name, name, std::move(data), crc, size, 0, size, {}, {}});
    return *this;
  }

  static void u16(std::string& s, std::uint16_t v) { s.append({char(v & 255), char(v >> 8)}); }
  static void u32(std::string& s, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
      s.push_back(char((v >> (8 * i)) & 255));
  }

  std::string bytes() const {
    std::string out, central;
    for (const Item& it : items) {
      const auto offset = static_cast<std::uint32_t>(out.size());
      u32(out, 0x04034b50);
      u16(out, 20), u16(out, 0), u16(out, it.method), u16(out, 0), u16(out, 0);
      u32(out, it.crc), u32(out, it.compressed_size), u32(out, it.declared_size);
      u16(out, static_cast<std::uint16_t>(it.local_name.size()));
      u16(out, static_cast<std::uint16_t>(it.local_extra.size()));
      out += it.local_name + it.local_extra + it.data;
      u32(central, 0x02014b50);
      u16(central, 0x031e), u16(central, 20), u16(central, 0), u16(central, it.method);
      u16(central, 0), u16(central, 0);
      u32(central, it.crc), u32(central, it.compressed_size), u32(central, it.declared_size);
      u16(central, static_cast<std::uint16_t>(it.name.size()));
      u16(central, static_cast<std::uint16_t>(it.central_extra.size())), u16(central, 0);
      u16(central, 0), u16(central, 0), u32(central, 0100644u << 16), u32(central, offset);
      central += it.name + it.central_extra;
    }
    const auto cd_offset = static_cast<std::uint32_t>(out.size());
    out += central;
    u32(out, 0x06054b50);
    u16(out, 0), u16(out, 0);
    u16(out, static_cast<std::uint16_t>(items.size())),
        u16(out, static_cast<std::uint16_t>(items.size()));
    u32(out, static_cast<std::uint32_t>(central.size())), u32(out, cd_offset);
    u16(out, static_cast<std::uint16_t>(comment.size()));
    return out + comment;
  }

  std::filesystem::path write() const {
    const auto path = std::filesystem::temp_directory_path() /
                      ("sagebuild-zip-" + std::to_string(std::random_device{}()) + ".zip");
    std::ofstream(path, std::ios::binary) << bytes();
    return path;
  }
};

std::optional<ZipError> read_first(const std::filesystem::path& path,
                                   std::string* content = nullptr) {
  auto archive = ZipArchive::open(path);
  REQUIRE(archive);
  auto stream = archive->open_stream();
  std::vector<std::uint8_t> out, scratch;
  auto error = archive->read(stream, archive->entries().at(0), out, scratch);
  if (content) content->assign(out.begin(), out.end());
  return error;
}

TEST_CASE("entries are listed and read", "[zip]") {
  const auto path = ZipBuilder().add("pkg/a.py", "print(1)\n").add("pkg/b.txt", "").write();
  auto archive = ZipArchive::open(path);
  REQUIRE(archive);
  REQUIRE(archive->entries().size() == 2);
  CHECK(archive->entries()[0].name == "pkg/a.py");
  CHECK(archive->entries()[0].unix_mode() == 0100644);
  std::string content;
  CHECK_FALSE(read_first(path, &content));
  CHECK(content == "print(1)\n");
  std::filesystem::remove(path);
}

TEST_CASE("a wrong CRC, a renamed local header and lying sizes are caught", "[zip]") {
  ZipBuilder crc;
  crc.add("a", "data");
  crc.items[0].crc ^= 1;
  auto path = crc.write();
  CHECK(read_first(path)->kind == ZipErrorKind::crc);
  std::filesystem::remove(path);

  ZipBuilder renamed;
  renamed.add("a", "data");
  renamed.items[0].local_name = "b";
  path = renamed.write();
  CHECK(read_first(path)->kind == ZipErrorKind::structure);
  std::filesystem::remove(path);

  ZipBuilder bomb;  // deflate entry declaring 2 GiB from 10 bytes: refused before inflating
  bomb.add("zeros", std::string(10, '\0'));
  bomb.items[0].method = 8;
  bomb.items[0].declared_size = 2u << 30;
  path = bomb.write();
  CHECK(read_first(path)->kind == ZipErrorKind::size_bounds);
  std::filesystem::remove(path);
}

TEST_CASE("a Unicode Path field is accepted only where it repeats the member's name", "[zip]") {
  const std::string decoy = "pkg/decoy.py", target = "pkg/__init__.py";
  struct Case {
    const char* label;
    std::string central, local;
    bool accepted;
  };
  const std::string honoured = ZipBuilder::unicode_path(target, decoy);  // 3.12+ installs target
  const std::string wrong_crc = ZipBuilder::unicode_path(target, "x");   // 3.12+ ignores it
  const std::string same = ZipBuilder::unicode_path(decoy, decoy);
  const std::string truncated("\x75\x70\x01\x00\x01", 5);  // version only, no CRC or name
  const std::vector<Case> cases = {
      {"honoured by CPython 3.12+, central", honoured, "", false},
      {"honoured, local header only", "", honoured, false},
      {"a CRC that CPython ignores", wrong_crc, "", false},
      {"truncated", truncated, "", false},
      {"repeating the name", same, same, true},
  };
  for (const Case& c : cases) {
    INFO(c.label);
    ZipBuilder zip;
    zip.add(decoy, "x = 1\n");
    zip.items[0].central_extra = c.central;
    zip.items[0].local_extra = c.local;
    const auto path = zip.write();
    auto archive = ZipArchive::open(path);
    if (!c.central.empty() && !c.accepted) {
      CHECK_FALSE(archive);
    } else {
      REQUIRE(archive);
      auto stream = archive->open_stream();
      std::vector<std::uint8_t> out, scratch;
      const auto error = archive->read(stream, archive->entries().at(0), out, scratch);
      CHECK(error.has_value() != c.accepted);
    }
    std::filesystem::remove(path);
  }
}

TEST_CASE("an archive comment ending in an end-record signature is refused", "[zip]") {
  // CPython's zipfile finds the comment's signature last, reads no whole record there, and
  // reports no archive; pip cannot install it.
  for (const std::string& comment : {std::string("PK\x05\x06"), std::string("xxPK\x05\x06yy")}) {
    ZipBuilder zip;
    zip.add("a", "data");
    zip.comment = comment;
    const auto path = zip.write();
    CHECK_FALSE(ZipArchive::open(path));
    std::filesystem::remove(path);
  }
  ZipBuilder plain;
  plain.add("a", "data");
  plain.comment = "built by sagebuild";
  const auto path = plain.write();
  CHECK(ZipArchive::open(path));
  std::filesystem::remove(path);
}

TEST_CASE("the archive's declared total is bounded before anything is read", "[zip]") {
  const auto path = ZipBuilder().add("a", "12345678").add("b", "12345678").write();
  ZipLimits limits;
  limits.max_total_size = 15;
  auto refused = ZipArchive::open(path, limits);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("more than 15 bytes in all") != std::string::npos);
  limits.max_total_size = 16;
  CHECK(ZipArchive::open(path, limits));
  std::filesystem::remove(path);
}

TEST_CASE("bytes that belong to no member are refused at open", "[zip]") {
  std::string junk_after = ZipBuilder().add("a", "data").bytes();
  std::string gap = ZipBuilder().add("a", "data").add("b", "more").bytes();
  // A central record pointing 4 bytes further: 4 bytes before 'b' belong to no member.
  for (const auto& [label, bytes] :
       {std::pair{"after", junk_after + "tail"}, std::pair{"gap", gap}}) {
    std::string data = bytes;
    if (std::string(label) == "gap") {
      const auto cd = data.find("PK\x01\x02", data.find("PK\x01\x02") + 4);
      data[cd + 42] = static_cast<char>(data[cd + 42] + 4);  // b's local header offset
    }
    const auto path = std::filesystem::temp_directory_path() / "sagebuild-zip-layout.zip";
    std::ofstream(path, std::ios::binary) << data;
    CHECK_FALSE(ZipArchive::open(path));
    std::filesystem::remove(path);
  }
}

TEST_CASE("files that are not ZIP archives are refused, never read out of bounds", "[zip]") {
  const std::string good = ZipBuilder().add("a", "data").bytes();
  const auto path = std::filesystem::temp_directory_path() /
                    ("sagebuild-zip-noise-" + std::to_string(std::random_device{}()) + ".zip");
  std::mt19937 random(11);
  int refused = 0;
  for (int i = 0; i < 500; ++i) {
    std::string noisy = good;
    for (int k = 0; k < 3; ++k)
      noisy[random() % noisy.size()] = static_cast<char>(random());
    if (i % 5 == 0) noisy.resize(random() % noisy.size());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << noisy;
    auto archive = ZipArchive::open(path);
    if (!archive) {
      ++refused;
      continue;
    }
    auto stream = archive->open_stream();
    std::vector<std::uint8_t> out, scratch;
    for (const auto& e : archive->entries())
      (void)archive->read(stream, e, out, scratch);
  }
  std::filesystem::remove(path);
  CHECK(refused > 0);
  auto empty = ZipArchive::open("/nonexistent.whl");
  CHECK_FALSE(empty);
}

}  // namespace
}  // namespace sagebuild::wheel
