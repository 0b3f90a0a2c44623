// The command-line surface. Everything here is thin: parse flags, call the rooms that do the
// work, print, and map failures to the documented exit codes (cli/exit_codes.h).
#pragma once

#include <ostream>

namespace sagebuild::cli {

// Runs sagebuild with the given arguments; never throws.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace sagebuild::cli
