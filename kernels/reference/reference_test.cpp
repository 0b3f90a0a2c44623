#include "reference.h"

#include <cmath>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

namespace sageattn::reference {
namespace {

TEST_CASE("e4m3, half and bfloat16 rounding", "[reference]") {
  CHECK(round_e4m3(448.0) == 448.0);
  CHECK(round_e4m3(1000.0) == 448.0);  // saturating, as cvt.rn.satfinite
  CHECK(round_e4m3(1.0625) == 1.0);    // halfway between 1 and 1.125: to even
  CHECK(round_e4m3(1.1875) == 1.25);   // halfway between 1.125 and 1.25: to even
  CHECK(round_e4m3(std::ldexp(1.0, -9)) == std::ldexp(1.0, -9));  // smallest subnormal
  CHECK(round_e4m3(std::ldexp(1.0, -11)) == 0.0);
  CHECK(round_e4m3(-3.3) == -3.25);
  CHECK(round_half(1.0 + std::ldexp(1.0, -11)) == 1.0);
  CHECK(round_half(65504.0) == 65504.0);
  CHECK(round_bfloat16(1.0 + std::ldexp(1.0, -8)) == 1.0);
  CHECK(round_bfloat16(3.14159) == 3.140625);
}

TEST_CASE("INT8 values follow the kernels' float arithmetic, not the exact quotient",
          "[reference]") {
  CHECK(round_int8(14.2265625, 14.2265625) == 127.0);
  CHECK(round_int8(-14.2265625, 14.2265625) == -127.0);
  CHECK(round_int8(3.0, 0.0) == 0.0);  // an all-zero group
  CHECK(round_int8(0.25, 127.0) == 0.0);
  CHECK(round_int8(1.5, 127.0) == 2.0);  // ties to even, as __float2int_rn
  CHECK(round_int8(2.5, 127.0) == 2.0);
  // x = amax / 2 is 63.5 exactly (64 to even), but 127 / 14.2265625 rounds down in float
  // (8.92696285...) and the float product is 63.4999962: the GPU writes 63 (fp16 inputs, so
  // both values are exact floats). Found by a search over fp16 pairs; the exact quotient made the
  // host reference differ from the GPU by up to 1% with outlier K.
  CHECK(127.0 * 7.11328125 / 14.2265625 == 63.5);
  CHECK(round_int8(7.11328125, 14.2265625) == 63.0);
  CHECK(round_int8(-7.11328125, 14.2265625) == -63.0);
}

struct Data {
  std::vector<double> q, k, v;
};

Data random_problem(int b, int hq, int hk, int lq, int lk, int d, double k_offset, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Data x;
  x.q.resize(static_cast<std::size_t>(b) * hq * lq * d);
  x.k.resize(static_cast<std::size_t>(b) * hk * lk * d);
  x.v.resize(x.k.size());
  std::vector<double> offset(d);
  for (double& o : offset)
    o = k_offset * normal(rng);
  for (double& e : x.q)
    e = normal(rng);
  for (std::size_t i = 0; i < x.k.size(); ++i)
    x.k[i] = normal(rng) + offset[i % d];
  for (double& e : x.v)
    e = normal(rng);
  return x;
}

double rel_l1(const std::vector<double>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::fabs(a[i] - ref[i]);
    den += std::fabs(ref[i]);
  }
  return num / den;
}

TEST_CASE("the quantized algorithm stays close to plain attention", "[reference]") {
  for (const bool causal : {false, true}) {
    for (const double offset : {0.0, 10.0}) {  // offset: K's per-channel outliers, smoothed away
      const int b = 1, hq = 2, hk = 1, lq = 70, lk = 130, d = 64;
      const Data x = random_problem(b, hq, hk, lq, lk, d, offset, 42);
      const Problem p{b,          hq,         hk,        lq, lk, d, causal, 1.0 / std::sqrt(d),
                      x.q.data(), x.k.data(), x.v.data()};
      std::vector<double> plain(x.q.size()), quant(x.q.size());
      std::vector<double> plain_lse(static_cast<std::size_t>(b) * hq * lq),
          quant_lse(plain_lse.size());
      plain_attention(p, plain.data(), plain_lse.data());
      for (int path_number = 0; path_number < kPathCount; ++path_number) {
        for (int acc = 0; acc < kAccumulationCount; ++acc) {
          const auto path = static_cast<PvPath>(path_number);
          const auto accumulation = static_cast<PvAccum>(acc);
          if (accumulation_name(path, accumulation) == nullptr) continue;
          quantized_attention(p, path, accumulation, DType::f16, Granularity::per_warp,
                              Granularity::per_block, true, quant.data(), quant_lse.data());
          INFO("causal " << causal << " offset " << offset << " path " << path_name(path) << " "
                         << accumulation_name(path, accumulation));
          CHECK(rel_l1(quant, plain) < (uses_fp8_v(path) ? 0.045 : 0.02));
          for (std::size_t i = 0; i < plain_lse.size(); ++i) {
            REQUIRE(std::fabs(quant_lse[i] - plain_lse[i]) < 0.08);
          }
        }
      }
    }
  }
}

TEST_CASE("causal attention is bottom-right aligned; rows that see nothing are zero",
          "[reference]") {
  // qo_len 3 > kv_len 2: query i sees keys j <= i - 1, so row 0 sees nothing.
  const Data x = random_problem(1, 1, 1, 3, 2, 64, 0.0, 7);
  const Problem p{1, 1, 1, 3, 2, 64, true, 0.125, x.q.data(), x.k.data(), x.v.data()};
  std::vector<double> out(3 * 64), lse(3);
  plain_attention(p, out.data(), lse.data());
  CHECK(std::isinf(lse[0]));
  CHECK(out[0] == 0.0);
  for (int d = 0; d < 64; ++d)
    CHECK(out[64 + d] == Approx(x.v[d]));  // row 1 sees key 0 only
}

}  // namespace
}  // namespace sageattn::reference
