// The one Catch2 runner for every *_test.cpp beside the code it tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
