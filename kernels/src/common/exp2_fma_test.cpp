#include "exp2_fma.h"

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

namespace sageattn::detail {
namespace {

constexpr double kBound = 1.8e-3;  // the polynomial's relative error (exp2_fma.h)

double relative_error(float x) {
  const double want = std::exp2(static_cast<double>(x));
  return std::abs(static_cast<double>(exp2_fma(x)) - want) / want;
}

TEST_CASE("exp2_fma is within its bound where softmax arguments live", "[exp2_fma]") {
  // The arguments are ≤ log2 448 (the row max maps there) and matter down to e4m3's smallest
  // subnormal, 2^-9; every float step of 2^-12 in [-32, 9], both sides of every rounding tie.
  double worst = 0;
  for (int i = -32 * 4096; i <= 9 * 4096; ++i) {
    const float x = static_cast<float>(i) / 4096.f;
    worst = std::max(worst, relative_error(x));
  }
  CHECK(worst <= kBound);
  CHECK(worst > kBound / 4);  // the bound is the polynomial's, not a loose one
}

TEST_CASE("exp2_fma keeps its bound over the whole exponent range", "[exp2_fma]") {
  for (float x = -126.f; x < 127.f; x += 0.37f) {
    CAPTURE(x);
    CHECK(relative_error(x) <= kBound);
  }
}

TEST_CASE("exp2_fma maps the row max to e4m3's largest value", "[exp2_fma]") {
  // e4m3 values near 448 are 416 and 448 (saturating): anything within 448·(1 - 1/28) rounds
  // to 448, so the block's largest P stays exact (the LSE depends on it).
  const float at_max = exp2_fma(8.807354922057604f);
  CHECK(at_max > 432.f);
  CHECK(at_max < 464.f);
}

TEST_CASE("exp2_fma gives a tiny non-negative value below its range, never garbage", "[exp2_fma]") {
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {-126.f, -126.5f, -127.f, -200.f, -1e6f, -3.4e38f, -inf}) {
    CAPTURE(x);
    const float y = exp2_fma(x);
    CHECK(y >= 0.f);
    CHECK(y <= 1.01f * std::ldexp(1.f, -126));
  }
}

}  // namespace
}  // namespace sageattn::detail
