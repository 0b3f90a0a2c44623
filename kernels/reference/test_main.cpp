// Catch2's runner for the kernel library's host-side tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
