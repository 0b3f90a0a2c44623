#include "wheel/pe.h"

#include <cstring>
#include <random>

#include <catch2/catch.hpp>

namespace sagebuild::wheel {
namespace {

// A minimal PE32+ image: headers, one section ".idata" holding an import descriptor for
// "KERNEL32.dll", at file offset 0x200 and virtual address 0x1000.
std::vector<std::uint8_t> tiny_pe() {
  std::vector<std::uint8_t> f(0x400, 0);
  auto put16 = [&](std::size_t at, std::uint16_t v) { std::memcpy(&f[at], &v, 2); };
  auto put32 = [&](std::size_t at, std::uint32_t v) { std::memcpy(&f[at], &v, 4); };
  f[0] = 'M';
  f[1] = 'Z';
  put32(0x3c, 0x80);
  std::memcpy(&f[0x80], "PE\0\0", 4);
  put16(0x84, 0x8664);  // machine
  put16(0x86, 1);       // sections
  put16(0x94, 240);     // size of optional header
  const std::size_t opt = 0x98;
  put16(opt, 0x20b);             // PE32+
  put32(opt + 108, 16);          // data directories
  put32(opt + 112 + 8, 0x1000);  // import table RVA
  put32(opt + 112 + 12, 40);
  const std::size_t sec = opt + 240;
  std::memcpy(&f[sec], ".idata\0\0", 8);
  put32(sec + 8, 0x100);             // virtual size
  put32(sec + 12, 0x1000);           // virtual address
  put32(sec + 16, 0x200);            // raw size
  put32(sec + 20, 0x200);            // raw offset
  put32(0x200 + 12, 0x1000 + 0x40);  // descriptor 0: name RVA
  put32(0x200 + 16, 0x1000 + 0x60);  // first thunk (non-zero)
  std::memcpy(&f[0x240], "KERNEL32.dll", 12);
  return f;
}

TEST_CASE("PE imports and machine", "[pe]") {
  auto info = read_pe(tiny_pe());
  REQUIRE(info);
  CHECK(info->machine == 0x8664);
  CHECK(info->imports == std::vector<std::string>{"KERNEL32.dll"});
  CHECK(info->fatbin.empty());
}

TEST_CASE("broken PE images are errors, never reads out of bounds", "[pe]") {
  auto bad = tiny_pe();
  std::memcpy(&bad[0x80], "XX\0\0", 4);
  CHECK(read_pe(bad).error().message == "no PE signature");
  auto away = tiny_pe();
  const std::uint32_t far = 0x7fff0000;
  std::memcpy(&away[0x98 + 112 + 8], &far, 4);
  CHECK(read_pe(away).error().message == "the import table lies outside every section");
  std::mt19937 random(3);
  for (int i = 0; i < 3000; ++i) {
    auto noisy = tiny_pe();
    for (int k = 0; k < 4; ++k)
      noisy[random() % 0x300] = static_cast<std::uint8_t>(random());
    (void)read_pe(noisy);
  }
  CHECK_FALSE(read_pe(std::vector<std::uint8_t>(10, 0)));
}

}  // namespace
}  // namespace sagebuild::wheel
