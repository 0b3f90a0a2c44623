// sagebuild entry point: everything happens in cli::run, which never throws.
#include <iostream>

#include "cli/app.h"

int main(int argc, char** argv) {
  return sagebuild::cli::run(argc, argv, std::cout, std::cerr);
}
