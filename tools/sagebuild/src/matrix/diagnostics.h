// Located problems in a configuration file, rendered the way compilers render them:
//
//   matrix.yaml:12:5: unknown key 'pyton' (did you mean 'python'?)
//      12 |     pyton: ["3.12"]
//         |     ^~~~~
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sagebuild {

// 1-based line and column; 0 means "unknown" (a problem of the file as a whole).
struct SourceLocation {
  int line = 0;
  int column = 0;
  int length = 1;  // how many characters the caret underlines
};

struct Diagnostic {
  std::string file;
  SourceLocation location;
  std::string message;
  std::string note = {};  // optional second line of advice, printed indented
};

using Diagnostics = std::vector<Diagnostic>;

// "file:line:col: message" — one line, as used in annotations and JSON output.
std::string format_headline(const Diagnostic& diagnostic);

// Headline plus the source line, a caret under the location, and the note.
std::string render(const Diagnostic& diagnostic, std::string_view source_text);

}  // namespace sagebuild
