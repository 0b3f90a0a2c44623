// Host references in float64: plain attention, and exactly the quantized algorithm the kernels
// run (same scales, the same key blocks of the online softmax, the same FP8/16-bit rounding of
// P and V), so that GPU results can be checked against both: the first for accuracy, the
// second "to rounding".
#pragma once

#include "sageattn/sageattn.h"

namespace sageattn::reference {

// Inputs contiguous [batch, heads, len, head_dim] (K and V with heads_kv heads), outputs
// [batch, heads_q, qo_len, head_dim] and [batch, heads_q, qo_len] (lse may be null).
struct Problem {
  int batch, heads_q, heads_kv, qo_len, kv_len, head_dim;
  bool causal;      // bottom-right aligned, as the kernels
  double sm_scale;  // already resolved (not 0)
  const double* q;
  const double* k;
  const double* v;
};

void plain_attention(const Problem& p, double* out, double* lse);

// The kernels' algorithm for `path` summing P·V as `accumulation` says (one the path has): V's
// FP8 scale to fp8_v_max, and under fp16_block each key block's P·V rounded to FP16 before it
// is added (the mma's own roundings inside the block are not modelled; on 16-bit paths P and V
// in FP16 and the exact row max; a block past FP16's range is not modelled either: the kernels
// compute its tile again).
void quantized_attention(const Problem& p, PvPath path, PvAccum accumulation, DType dtype,
                         Granularity q_granularity, Granularity k_granularity, bool smooth_k,
                         double* out, double* lse);

// The INT8 value the kernels give x in a group whose largest |value| is amax: the factor
// 127 / amax and the product each rounded to float, then to the nearest integer, ties to even
// (src/common/device_primitives.cuh: int8_inverse_scale, quantize_int8x8). Not the exact quotient:
// where the float product falls on the other side of a half the two differ by one (x = amax / 2 is
// 63.5 exactly, 64, but 63 when 127 / amax rounds down in float), and with outlier K one such
// Q or K value moves an output row by up to ~1%.
double round_int8(double x, double amax);

// Nearest e4m3 value (round to nearest even, saturating at 448), and the 16-bit types.
double round_e4m3(double x);
double round_half(double x);
double round_bfloat16(double x);

}  // namespace sageattn::reference
