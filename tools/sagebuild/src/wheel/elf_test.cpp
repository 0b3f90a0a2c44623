#include "wheel/elf.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <tuple>

#include <catch2/catch.hpp>

namespace sagebuild::wheel {
namespace {

// An image as nvcc writes one: uncompressed SASS is a cubin (an ELF header, here with no
// sections) followed by `payload` bytes; a compressed image states its sizes.
std::vector<std::uint8_t> fatbin_image(std::uint16_t kind, std::uint32_t arch, std::uint64_t flags,
                                       std::size_t payload) {
  const bool compressed = flags & 0xA000;
  if (compressed) payload = std::max<std::size_t>(payload, 1);
  if (kind == 2 && !compressed) payload += 64;
  std::vector<std::uint8_t> image(64 + payload, 0);
  auto put = [&](std::size_t at, auto value) { std::memcpy(&image[at], &value, sizeof(value)); };
  if (kind == 2 && !compressed) {
    std::memcpy(&image[64],
                "\x7f"
                "ELF\x02\x01",
                6);
  }
  if (compressed) {
    put(16, static_cast<std::uint32_t>(payload));
    put(56, std::uint64_t{payload * 2});
  }
  put(0, kind);
  put(2, std::uint16_t{0x0101});
  put(4, std::uint32_t{64});
  put(8, std::uint64_t{payload});
  put(28, arch);
  put(40, flags);
  return image;
}

std::vector<std::uint8_t> container(const std::vector<std::vector<std::uint8_t>>& images) {
  std::size_t body = 0;
  for (const auto& i : images)
    body += i.size();
  // Sized once and filled with memcpy (GCC 12 misreads vector::insert here: -Warray-bounds).
  std::vector<std::uint8_t> out(16 + body, 0);
  const std::uint32_t magic = 0xBA55ED50;
  const std::uint16_t version = 1, header = 16;
  const std::uint64_t size = body;
  std::memcpy(&out[0], &magic, 4);
  std::memcpy(&out[4], &version, 2);
  std::memcpy(&out[6], &header, 2);
  std::memcpy(&out[8], &size, 8);
  std::size_t at = 16;
  for (const auto& i : images) {
    std::memcpy(&out[at], i.data(), i.size());
    at += i.size();
  }
  return out;
}

TEST_CASE("fat binary images: SASS, arch-specific and family variants, PTX", "[fatbin]") {
  const auto section =
      container({fatbin_image(2, 80, 0x11, 8), fatbin_image(2, 90, 0x100011, 8),
                 fatbin_image(2, 100, 0x1200011, 0), fatbin_image(1, 90, 0x8011, 4)});
  auto images = parse_fatbin(section);
  REQUIRE(images);
  REQUIRE(images->size() == 4);
  CHECK((*images)[0].name() == "sm_80");
  CHECK((*images)[1].name() == "sm_90a");
  CHECK((*images)[2].name() == "sm_100f");
  CHECK((*images)[3].name() == "compute_90");
}

TEST_CASE("images that cannot load are errors: truncated cubins, lying compressed sizes",
          "[fatbin]") {
  auto truncated = fatbin_image(2, 90, 0x100011, 0);
  truncated.resize(64 + 16);  // the cubin cut after 16 bytes: no ELF header left
  const std::uint64_t sixteen = 16;
  std::memcpy(&truncated[8], &sixteen, 8);
  auto read = parse_fatbin(container({truncated}));
  REQUIRE_FALSE(read);
  CHECK(read.error().message.find("not a cubin") != std::string::npos);

  auto table_past_end = fatbin_image(2, 90, 0x100011, 0);
  const std::uint64_t shoff = 64;
  const std::uint16_t shentsize = 64, shnum = 5;
  std::memcpy(&table_past_end[64 + 0x28], &shoff, 8);
  std::memcpy(&table_past_end[64 + 0x3A], &shentsize, 2);
  std::memcpy(&table_past_end[64 + 0x3C], &shnum, 2);
  read = parse_fatbin(container({table_past_end}));
  REQUIRE_FALSE(read);
  CHECK(read.error().message.find("section table ends past it") != std::string::npos);

  auto lying = fatbin_image(1, 90, 0x8011, 8);
  const std::uint32_t more = 9;  // compressed size larger than the payload
  std::memcpy(&lying[16], &more, 4);
  CHECK_FALSE(parse_fatbin(container({lying})));
}

TEST_CASE("hostile fat binaries are errors, never reads out of bounds", "[fatbin]") {
  auto section = container({fatbin_image(2, 80, 0x11, 8)});
  auto lying = section;
  const std::uint64_t huge = 1ull << 40;
  std::memcpy(&lying[16 + 8], &huge, 8);  // the image claims a payload past the section
  CHECK_FALSE(parse_fatbin(lying));
  auto bad_magic = section;
  bad_magic[0] ^= 0xff;
  CHECK_FALSE(parse_fatbin(bad_magic));
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {  // random corruption: an answer each time, no crash
    auto noisy = section;
    noisy[random() % noisy.size()] = static_cast<std::uint8_t>(random());
    (void)parse_fatbin(noisy);
  }
}

TEST_CASE("ELF reading refuses what it cannot read", "[elf]") {
  std::vector<std::uint8_t> not_elf(100, 0);
  CHECK(read_elf(not_elf).error().message == "not an ELF file");
  std::vector<std::uint8_t> elf32(100, 0);
  std::memcpy(elf32.data(),
              "\x7f"
              "ELF\x01\x01",
              6);
  CHECK(read_elf(elf32).error().message == "not a 64-bit little-endian ELF file");
  std::vector<std::uint8_t> truncated(64, 0);
  std::memcpy(truncated.data(),
              "\x7f"
              "ELF\x02\x01",
              6);
  const std::uint64_t shoff = 1 << 20;
  const std::uint16_t shentsize = 64, shnum = 3;
  std::memcpy(&truncated[0x28], &shoff, 8);
  std::memcpy(&truncated[0x3A], &shentsize, 2);
  std::memcpy(&truncated[0x3C], &shnum, 2);
  CHECK(read_elf(truncated).error().message == "the section header table lies outside the file");
}

// A minimal ELF64 with a section-name table and one more section named ".nv_fatbin" of `type`
// at `offset` with `size`.
std::vector<std::uint8_t> elf_with_fatbin_section(std::uint32_t type, std::uint64_t offset,
                                                  std::uint64_t size) {
  const char names[] = "\0.shstrtab\0.nv_fatbin\0";
  std::vector<std::uint8_t> file(64 + sizeof(names) + 3 * 64, 0);
  std::memcpy(file.data(),
              "\x7f"
              "ELF\x02\x01",
              6);
  auto put = [&](std::size_t at, auto value) { std::memcpy(&file[at], &value, sizeof(value)); };
  const std::uint64_t shoff = 64 + sizeof(names);
  put(0x28, shoff);
  put(0x3A, std::uint16_t{64});
  put(0x3C, std::uint16_t{3});
  put(0x3E, std::uint16_t{1});
  std::memcpy(&file[64], names, sizeof(names));
  // [1] .shstrtab
  put(shoff + 64 + 0, std::uint32_t{1});
  put(shoff + 64 + 4, std::uint32_t{3});
  put(shoff + 64 + 24, std::uint64_t{64});
  put(shoff + 64 + 32, std::uint64_t{sizeof(names)});
  // [2] .nv_fatbin
  put(shoff + 128 + 0, std::uint32_t{11});
  put(shoff + 128 + 4, type);
  put(shoff + 128 + 24, offset);
  put(shoff + 128 + 32, size);
  return file;
}

TEST_CASE("a section whose extent leaves the file is an error, NOBITS included", "[elf]") {
  constexpr std::uint32_t kProgbits = 1, kNobits = 8;
  // A NOBITS .nv_fatbin at the end of the file and far past it: never read as contents.
  for (const std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{1} << 40}) {
    auto file = elf_with_fatbin_section(kNobits, offset, 4096);
    if (offset == 0) {
      const std::uint64_t end = file.size();
      std::memcpy(&file[64 + 24 + 128 + 24], &end, 8);  // offset = EOF
    }
    const auto read = read_elf(file);
    REQUIRE_FALSE(read);
    CHECK((read.error().message == ".nv_fatbin has no contents in the file (NOBITS)" ||
           read.error().message == "section 2 lies outside the file"));
  }
  CHECK(read_elf(elf_with_fatbin_section(kNobits, std::uint64_t{1} << 40, 16)).error().message ==
        "section 2 lies outside the file");
  CHECK(read_elf(elf_with_fatbin_section(kProgbits, 100, std::uint64_t{1} << 40)).error().message ==
        "section 2 lies outside the file");
}

TEST_CASE("undefined dynamic symbols come with the version each needs", "[elf]") {
  // This test program itself: a real ELF linked against glibc.
  std::ifstream in("/proc/self/exe", std::ios::binary);
  const std::vector<std::uint8_t> self{std::istreambuf_iterator<char>(in), {}};
  const auto elf = read_elf(self);
  REQUIRE(elf);
  CHECK_FALSE(elf->undefined.empty());
  CHECK(std::any_of(elf->undefined.begin(), elf->undefined.end(), [](const SymbolNeed& n) {
    return n.library == "libc.so.6" && n.version.starts_with("GLIBC_") && !n.symbol.empty();
  }));
  // Every versioned need also appears among the Verneed records.
  for (const SymbolNeed& n : elf->undefined) {
    if (n.version.empty()) continue;
    CHECK(std::find(elf->version_needs.begin(), elf->version_needs.end(),
                    std::pair{n.library, n.version}) != elf->version_needs.end());
  }
}

TEST_CASE("architecture names as TORCH_CUDA_ARCH_LIST writes them", "[elf]") {
  CHECK(arch_number("9.0a") == std::pair<int, std::string>{90, "a"});
  CHECK(arch_number("12.0+PTX") == std::pair<int, std::string>{120, ""});
  CHECK(arch_number("10.0f") == std::pair<int, std::string>{100, "f"});
  CHECK_FALSE(arch_number("90"));
  CHECK_FALSE(arch_number("9.x"));
}

}  // namespace
}  // namespace sagebuild::wheel

namespace sagebuild::wheel {
namespace {

// An ELF64 whose sections are given as (type, link, bytes), laid out one after the other,
// section 1 being a string table ("\0lib\0") the others may link to.
std::vector<std::uint8_t> elf_with_sections(
    const std::vector<std::tuple<std::uint32_t, std::uint32_t, std::vector<std::uint8_t>>>& list) {
  std::vector<std::uint8_t> file(64, 0);
  std::memcpy(file.data(),
              "\x7f"
              "ELF\x02\x01",
              6);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> extents;
  for (const auto& [type, link, bytes] : list) {
    extents.emplace_back(file.size(), bytes.size());
    file.insert(file.end(), bytes.begin(), bytes.end());
  }
  const std::uint64_t shoff = file.size();
  file.resize(file.size() + 64 * (list.size() + 1), 0);
  auto put = [&](std::size_t at, auto value) { std::memcpy(&file[at], &value, sizeof(value)); };
  put(0x28, shoff);
  put(0x3A, std::uint16_t{64});
  put(0x3C, static_cast<std::uint16_t>(list.size() + 1));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::size_t at = shoff + 64 * (i + 1);
    put(at + 4, std::get<0>(list[i]));
    put(at + 40, std::get<1>(list[i]));
    put(at + 24, extents[i].first);
    put(at + 32, extents[i].second);
  }
  return file;
}

TEST_CASE("work that one region multiplies has a budget", "[elf]") {
  constexpr std::uint32_t kStrtab = 3, kVerneed = 0x6ffffffe, kDynsym = 11;
  const std::vector<std::uint8_t> strings = {0, 'l', 'i', 'b', 0};
  // 100 version needs whose aux chains all run through one region of 3,000 records: 300,000
  // visits from a 50 KB section, against a budget of 100,000 (the real one is larger by the
  // same ratio to what a real library needs).
  constexpr std::uint32_t needs = 100, auxes = 3000;
  std::vector<std::uint8_t> verneed(16 * (needs + auxes), 0);
  auto put = [&](std::size_t at, auto value) { std::memcpy(&verneed[at], &value, sizeof(value)); };
  for (std::uint32_t i = 0; i < needs; ++i) {
    put(16 * i + 2, std::uint16_t{65535});                      // vn_cnt
    put(16 * i + 4, std::uint32_t{1});                          // vn_file: "lib"
    put(16 * i + 8, std::uint32_t{16 * (needs - i)});           // vn_aux: the shared region
    put(16 * i + 12, std::uint32_t{i + 1 < needs ? 16u : 0u});  // vn_next
  }
  for (std::uint32_t k = 0; k < auxes; ++k)
    put(16 * (needs + k) + 12, std::uint32_t{16});  // vna_next
  const auto sections = elf_with_sections({{kStrtab, 0, strings}, {kVerneed, 1, verneed}});
  const auto amplified = read_elf(sections, {100'000, 1 << 20});
  REQUIRE_FALSE(amplified);
  CHECK(amplified.error().message.starts_with("more than 100000 records"));
  const auto read = read_elf(sections, {10'000'000, 64 << 20});  // within a larger budget: read
  REQUIRE(read);
  CHECK(read->version_needs.size() == 1);  // ("lib", "") once, however often it is reached

  // The dynamic linker reads one symbol table: a second one is refused.
  const std::vector<std::uint8_t> symbols(48, 0);
  const auto twice = read_elf(
      elf_with_sections({{kStrtab, 0, strings}, {kDynsym, 1, symbols}, {kDynsym, 1, symbols}}));
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message == "more than one section of type 0xb");
}

}  // namespace
}  // namespace sagebuild::wheel
