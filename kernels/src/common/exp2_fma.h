// exp2 on the FMA pipe, for the share of the softmax's exponentials that the Hopper kernel moves
// off the MUFU unit (which does 16 ex2 per clock per SM: at d=128 as many cycles as the tensor
// cores need for the same block, kernels/NOTES.md). Host and device, so a host test can check it.
//
// 2^x = 2^j · 2^f with j = round(x), f = x - j in [-0.5, 0.5]: j by the round-to-nearest of a
// float add of 1.5·2^23 (j lands in the low mantissa bits), 2^f by a degree-2 polynomial
// (relative error ≤ 1.8e-3, minimax: P then goes through e4m3, whose half step is 2^-4),
// j added to the result's exponent field. 7 instructions: FMNMX, 3 FADD, 2 FFMA, LEA.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SAGEATTN_EXP2_INLINE __host__ __device__ __forceinline__
#else
#define SAGEATTN_EXP2_INLINE inline
#endif

namespace sageattn::detail {

SAGEATTN_EXP2_INLINE std::int32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_int(x);
#else
  std::int32_t i;
  std::memcpy(&i, &x, sizeof i);
  return i;
#endif
}

SAGEATTN_EXP2_INLINE float bits_float(std::int32_t i) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(i);
#else
  float x;
  std::memcpy(&x, &i, sizeof x);
  return x;
#endif
}

// For x in [-126, 128): 2^x within 1.8e-3 relative. Below -126 (and -inf) it returns about
// 2^-126, which rounds to 0 in e4m3 and fp16 but not in bf16 (the 16-bit path zeroes masked P
// itself), and vanishes in FP32 arithmetic against any P of the same row.
// NaN is not expected (the arguments are finite or -inf) and gives 2^-126 too.
SAGEATTN_EXP2_INLINE float exp2_fma(float x) {
  constexpr float kRound = 12582912.f;  // 1.5·2^23: x + kRound rounds x to an integer j
  // Clamped so that j·2^23 cannot carry into the sign bit: j ≥ -126, and j = -126 only with
  // f ≥ 0, where the polynomial is ≥ 1 (exponent field 127).
  x = x > -126.f ? x : -126.f;
  const float shifted = x + kRound;  // bits: 0x4B400000 + j
  const float f = x - (shifted - kRound);
  const float p = fmaf(fmaf(0.238426760f, f, 0.703444890f), f, 1.00044305f);
  // (0x4B400000 + j) << 23 ≡ j << 23 (mod 2^32): the bias's set bits all shift out.
  const std::uint32_t exponent = static_cast<std::uint32_t>(float_bits(shifted)) << 23;
  return bits_float(
      static_cast<std::int32_t>(static_cast<std::uint32_t>(float_bits(p)) + exponent));
}

}  // namespace sageattn::detail
