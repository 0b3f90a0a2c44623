#include "wheel/dist_info.h"

#include <optional>
#include <random>

#include <catch2/catch.hpp>

#include "util/text.h"

namespace sagebuild::wheel {
namespace {

TEST_CASE("RECORD is CSV as Python writes it", "[record]") {
  auto rows = parse_record(
      "a/b.py,sha256=abc,12\r\n\"a/with,comma.py\",sha256=def,3\n\"q\"\"uote\",,\n\"two\n"
      "lines\",,\npkg.dist-info/RECORD,,\n");
  REQUIRE(rows);
  REQUIRE(rows->size() == 5);
  CHECK((*rows)[0].path == "a/b.py");
  CHECK((*rows)[0].hash == "sha256=abc");
  CHECK((*rows)[0].size == "12");
  CHECK((*rows)[1].path == "a/with,comma.py");
  CHECK((*rows)[2].path == "q\"uote");
  CHECK((*rows)[3].path == "two\nlines");
  CHECK((*rows)[4].line == 6);
}

TEST_CASE("malformed RECORD rows are errors with their line", "[record]") {
  CHECK(parse_record("a,b\n").error().message ==
        "RECORD line 1 has 2 fields, expected 3 (path,hash,size)");
  CHECK(parse_record("ok,sha256=x,1\n\"open,x,1\n").error().message ==
        "RECORD line 2 has an unterminated quote");
  // csv yields an empty row for a blank line, and pip cannot install the wheel.
  CHECK(parse_record("ok,sha256=x,1\n\nRECORD,,\n")
            .error()
            .message.starts_with("RECORD line 2 is blank"));
}

TEST_CASE("headers stop at the body; only free text folds", "[headers]") {
  auto h = Headers::parse(
      "Metadata-Version: 2.1\nName: sageattention\nRequires-Dist: torch==2.8.*\n"
      "Requires-Dist: numpy\nDescription: a long\n  text\n\nName: in the body\n");
  REQUIRE(h);
  CHECK(h->first("name") == "sageattention");
  CHECK(h->all("Requires-Dist") == std::vector<std::string>{"torch==2.8.*", "numpy"});
  CHECK(h->first("Description") == "a long\n  text");
  CHECK(h->count("Name") == 1);
  CHECK_FALSE(Headers::parse("no colon here\n"));
  CHECK_FALSE(Headers::parse(" starts with a continuation\n"));
}

// Each input here is one that Python's email parser (as pip reads METADATA) reads differently
// from a plain "Key: value" reader: the parser must refuse it, not pick one reading.
TEST_CASE("headers Python's email parser reads differently are refused", "[headers]") {
  const std::string pin = "Requires-Dist: torch==2.8.*\n";
  CHECK(Headers::parse("Name: x\r\n" + pin));  // CRLF lines are fine
  for (const std::string& bad : std::vector<std::string>{
           "X-Note : hi\n" + pin,                         // space before the colon
           "Caf\xc3\xa9: x\n" + pin,                      // a non-ASCII name
           "Summary: a\rRequires-Dist: torch<2\n" + pin,  // a lone CR starts a line for Python
           std::string("Requires-Dist: numpy\n torch==2.8.*\n"),  // a folded requirement
           "Name: x\nFrom somebody\n" + pin,                      // mbox's From line
           ": empty name\n" + pin,                                // Python takes '' as a name
           "Name: \xff\xfe\n" + pin,                              // not UTF-8
       }) {
    INFO(bad);
    CHECK_FALSE(Headers::parse(bad));
  }
}

// ---- entry_points.txt ----

// How importlib.metadata reads entry_points.txt (Sectioned.read and Pair.parse): the text
// decoded as UTF-8, str.splitlines(), each line str.strip()ped, empty and '#' lines dropped, a
// line starting with '[' and ending with ']' a section named by strip('[]'), others split at
// the first '='. Written out here for the property test below; its line ends and whitespace are
// CPython's (Objects/unicodectype.c), over the code points the generator produces.
std::vector<EntryPoint> importlib_reading(const std::string& text) {
  std::vector<std::string> lines(1);
  auto is_space = [](std::string_view s, std::size_t i) -> std::size_t {  // bytes of a space
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) return 1;
    if (s.substr(i, 2) == "\xc2\x85" || s.substr(i, 2) == "\xc2\xa0") return 2;
    if (s.substr(i, 3) == "\xe2\x80\xa8" || s.substr(i, 3) == "\xe2\x80\xa9") return 3;
    return 0;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t end = 0;  // bytes of a line boundary here
    if (c == '\r') {
      end = text.substr(i, 2) == "\r\n" ? 2 : 1;
    } else if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) {
      end = 1;
    } else if (text.substr(i, 2) == "\xc2\x85") {
      end = 2;
    } else if (text.substr(i, 3) == "\xe2\x80\xa8" || text.substr(i, 3) == "\xe2\x80\xa9") {
      end = 3;
    }
    if (end) {
      lines.emplace_back();
      i += end;
    } else {
      lines.back() += text[i++];
    }
  }
  std::vector<EntryPoint> entries;
  std::optional<std::string> section;
  for (const std::string& raw : lines) {
    std::size_t begin = 0, end = raw.size();
    while (begin < end && is_space(raw, begin))
      begin += is_space(raw, begin);
    while (end > begin) {  // trailing: try each width that ends here
      std::size_t width = 0;
      for (std::size_t w = 1; w <= 3 && w <= end - begin; ++w)
        if (is_space(raw, end - w) == w) width = w;
      if (!width) break;
      end -= width;
    }
    const std::string line = raw.substr(begin, end - begin);
    if (line.empty() || line.starts_with('#')) continue;
    if (line.starts_with('[') && line.ends_with(']')) {
      const std::size_t first = line.find_first_not_of("[]"), last = line.find_last_not_of("[]");
      section = first == std::string::npos ? "" : line.substr(first, last - first + 1);
      continue;
    }
    if (!section) continue;
    const std::size_t equals = line.find('=');
    if (equals == std::string::npos) continue;  // Pair.parse raises: that text is not accepted
    entries.push_back({*section, std::string(text::trim(line.substr(0, equals))),
                       std::string(text::trim(line.substr(equals + 1))), 0});
  }
  return entries;
}

TEST_CASE("entry points: the hijack spellings are refused, plain lists accepted",
          "[entry-points]") {
  const std::string hidden = "pip = evil:main";
  const std::vector<std::string> refused = {
      "[console_scripts]\nsageattn = sageattention.cli:main\v" + hidden + "\n",
      "[console_scripts]\nx = a:b\f" + hidden + "\n",
      "[console_scripts]\nx = a:b\x1c" + hidden + "\n",
      "[console_scripts]\nx = a:b\x1d" + hidden + "\n",
      "[console_scripts]\nx = a:b\x1e" + hidden + "\n",
      "[console_scripts]\nx = a:b\xc2\x85" + hidden + "\n",
      "[console_scripts]\nx = a:b\xe2\x80\xa8" + hidden + "\n",
      "[console_scripts]\nx = a:b\xe2\x80\xa9" + hidden + "\n",
      "[console_scripts]\nx = a:b\r" + hidden + "\n",
      "[[console_scripts]]\n" + hidden + "\n",
      "[]console_scripts]\n" + hidden + "\n",
      "[console_scripts] \n[console_scripts]\n" + hidden + "\n",
      "[other]\n;" + hidden + "\n",
      hidden + "\n",
      "[console_scripts]\nx = a:b\nx = c:d\n",
      "[console_scripts]\nx = not a reference\n",
  };
  for (const std::string& text : refused) {
    INFO(text);
    CHECK_FALSE(parse_entry_points(text));
  }
  auto plain = parse_entry_points(
      "# generated\r\n[console_scripts]\r\nsageattn-bench = sageattention.bench:main\r\n\n"
      "[sagebuild.plugins]\n  kernels = sageattention.kernels\n");
  REQUIRE(plain);
  REQUIRE(plain->size() == 2);
  CHECK((*plain)[0].group == "console_scripts");
  CHECK((*plain)[0].name == "sageattn-bench");
  CHECK((*plain)[0].value == "sageattention.bench:main");
  CHECK((*plain)[0].line == 3);
  CHECK((*plain)[1].value == "sageattention.kernels");
}

TEST_CASE("entry points: every accepted text reads the same to importlib.metadata",
          "[entry-points][property]") {
  // Random texts from the pieces the readers disagree on; every text accepted must give the
  // model of importlib.metadata exactly the entries verify-wheel checked.
  const std::vector<std::string> pieces = {"[",
                                           "]",
                                           "=",
                                           ":",
                                           " ",
                                           "\t",
                                           "\n",
                                           "\r\n",
                                           "\r",
                                           "\v",
                                           "\f",
                                           "\x1c",
                                           "\x1d",
                                           "\x1e",
                                           "\x1f",
                                           "\xc2\x85",
                                           "\xc2\xa0",
                                           "\xe2\x80\xa8",
                                           "#",
                                           ";",
                                           "console_scripts",
                                           "gui_scripts",
                                           "pip",
                                           "pkg",
                                           "a:b",
                                           ".",
                                           "_",
                                           "x"};
  std::mt19937 random(20261129);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = i % 2 ? "[console_scripts]\n" : "";
    const int length = static_cast<int>(random() % 24);
    for (int k = 0; k < length; ++k)
      text += pieces[random() % pieces.size()];
    auto ours = parse_entry_points(text);
    if (!ours) continue;
    ++accepted;
    const auto theirs = importlib_reading(text);
    INFO(text);
    REQUIRE(theirs.size() == ours->size());
    for (std::size_t k = 0; k < theirs.size(); ++k) {
      CHECK(theirs[k].group == (*ours)[k].group);
      CHECK(theirs[k].name == (*ours)[k].name);
      CHECK(theirs[k].value == (*ours)[k].value);
    }
  }
  CHECK(accepted > 1000);  // the generator reaches accepted texts, so the property is exercised
}

}  // namespace
}  // namespace sagebuild::wheel
