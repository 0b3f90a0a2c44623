#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../src/common/mask.h"         // the kernels' mask
#include "../src/common/tile_policy.h"  // the kernels' tiling, which the reference must follow

namespace sageattn::reference {
namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

// Rounds to a binary float with `mantissa` stored bits and normal exponents from `min_exp`,
// to nearest even, saturating at `max_value`.
double round_float(double x, int mantissa, int min_exp, double max_value) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int e = std::max(static_cast<int>(std::floor(std::log2(std::fabs(x)))), min_exp);
  const double quantum = std::ldexp(1.0, e - mantissa);
  const double r = std::nearbyint(x / quantum) * quantum;
  return std::clamp(r, -max_value, max_value);
}

std::size_t at(int b, int h, int s, int d, int heads, int len, int dim) {
  return ((static_cast<std::size_t>(b) * heads + h) * len + s) * dim + d;
}

bool visible(const Problem& p, int row, int key) {
  using detail::KeyMask;
  const KeyMask::Kind kind = KeyMask::kind_of_call(p.causal);
  return KeyMask::of_sequence(kind, p.qo_len, p.kv_len).visible(key, row);
}

// INT8 quantization of `rows` x `dim` values in groups of `group` rows (over the padded length).
std::vector<double> quantize_int8(const std::vector<double>& x, int len, int dim, int group,
                                  std::vector<double>& scales) {
  const int padded = (len + 63) / 64 * 64;
  std::vector<double> q(static_cast<std::size_t>(padded) * dim, 0.0);
  scales.assign(padded / group, 0.0);
  for (int g0 = 0; g0 < padded; g0 += group) {
    double amax = 0;
    for (int r = g0; r < std::min(g0 + group, len); ++r) {
      for (int d = 0; d < dim; ++d)
        amax = std::max(amax, std::fabs(x[static_cast<std::size_t>(r) * dim + d]));
    }
    const double scale = amax / 127.0;
    scales[g0 / group] = scale;
    for (int r = g0; r < std::min(g0 + group, len); ++r) {
      for (int d = 0; d < dim; ++d) {
        const std::size_t i = static_cast<std::size_t>(r) * dim + d;
        q[i] = round_int8(x[i], amax);
      }
    }
  }
  return q;
}

}  // namespace

double round_int8(double x, double amax) {
  if (!(amax > 0)) return 0.0;  // an all-zero group stays zero
  const float inverse = 127.0f / static_cast<float>(amax);
  return std::nearbyint(static_cast<double>(static_cast<float>(x) * inverse));
}

double round_e4m3(double x) {
  return round_float(x, 3, -6, 448.0);
}
double round_half(double x) {
  return round_float(x, 10, -14, 65504.0);
}
double round_bfloat16(double x) {
  return round_float(x, 7, -126, 3.38953139e38);
}

void plain_attention(const Problem& p, double* out, double* lse) {
  const int group = p.heads_q / p.heads_kv, D = p.head_dim;
  std::vector<double> s(p.kv_len);
  for (int b = 0; b < p.batch; ++b) {
    for (int h = 0; h < p.heads_q; ++h) {
      const int hk = h / group;
      for (int i = 0; i < p.qo_len; ++i) {
        double m = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < p.kv_len; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d) {
            dot += p.q[at(b, h, i, d, p.heads_q, p.qo_len, D)] *
                   p.k[at(b, hk, j, d, p.heads_kv, p.kv_len, D)];
          }
          s[j] = visible(p, i, j) ? dot * p.sm_scale : -std::numeric_limits<double>::infinity();
          m = std::max(m, s[j]);
        }
        double l = 0;
        std::vector<double> o(D, 0.0);
        if (m != -std::numeric_limits<double>::infinity()) {
          for (int j = 0; j < p.kv_len; ++j) {
            const double w = std::exp(s[j] - m);
            l += w;
            for (int d = 0; d < D; ++d)
              o[d] += w * p.v[at(b, hk, j, d, p.heads_kv, p.kv_len, D)];
          }
        }
        for (int d = 0; d < D; ++d)
          out[at(b, h, i, d, p.heads_q, p.qo_len, D)] = l > 0 ? o[d] / l : 0.0;
        if (lse) {
          lse[(static_cast<std::size_t>(b) * p.heads_q + h) * p.qo_len + i] =
              l > 0 ? m + std::log(l) : -std::numeric_limits<double>::infinity();
        }
      }
    }
  }
}

void quantized_attention(const Problem& p, PvPath path, PvAccum accumulation, DType dtype,
                         Granularity q_granularity, Granularity k_granularity, bool smooth_k,
                         double* out, double* lse) {
  const int group = p.heads_q / p.heads_kv, D = p.head_dim;
  const int q_rows = q_granularity == Granularity::per_block ? 64 : 16;
  const int k_rows = k_granularity == Granularity::per_block ? 64 : 16;
  const double inf = std::numeric_limits<double>::infinity();
  // The online softmax's key blocks: 64 keys in the mma.sync kernels, the Hopper one's choice
  // for the call in it (64 or 128).
  const int block_n =
      is_sm90_path(path)
          ? detail::sm90_key_block(D, uses_fp8_v(path),
                                   detail::sm90_consumer_warpgroups(D, path, p.causal, p.qo_len))
          : detail::kBlockN;
  const bool pv16 = !uses_fp8_v(path);
  const double v_max = fp8_v_max(accumulation);
  const bool fp16_block = accumulation == PvAccum::fp16_block;
  for (int b = 0; b < p.batch; ++b) {
    for (int hk = 0; hk < p.heads_kv; ++hk) {
      // K: mean over the sequence (smoothing), INT8 per k_rows rows.
      std::vector<double> mean(D, 0.0), k(static_cast<std::size_t>(p.kv_len) * D);
      for (int j = 0; j < p.kv_len; ++j) {
        for (int d = 0; d < D; ++d) {
          k[static_cast<std::size_t>(j) * D + d] = p.k[at(b, hk, j, d, p.heads_kv, p.kv_len, D)];
          if (smooth_k) mean[d] += k[static_cast<std::size_t>(j) * D + d] / p.kv_len;
        }
      }
      for (int j = 0; j < p.kv_len; ++j) {
        for (int d = 0; d < D; ++d)
          k[static_cast<std::size_t>(j) * D + d] -= mean[d];
      }
      std::vector<double> k_scale;
      const std::vector<double> k8 = quantize_int8(k, p.kv_len, D, k_rows, k_scale);
      // V: FP8 with a per-channel scale, or the 16-bit values as they are.
      std::vector<double> amax(D, 0.0), v(static_cast<std::size_t>(p.kv_len) * D);
      for (int j = 0; j < p.kv_len; ++j) {
        for (int d = 0; d < D; ++d) {
          const double x = p.v[at(b, hk, j, d, p.heads_kv, p.kv_len, D)];
          v[static_cast<std::size_t>(j) * D + d] = x;
          amax[d] = std::max(amax[d], std::fabs(x));
        }
      }
      if (pv16 && fp16_block) {  // bf16 V converted to FP16 as it is read
        for (double& x : v)
          x = round_half(x);
      }
      if (uses_fp8_v(path)) {
        for (int j = 0; j < p.kv_len; ++j) {
          for (int d = 0; d < D; ++d) {
            double& x = v[static_cast<std::size_t>(j) * D + d];
            x = amax[d] > 0 ? round_e4m3(x * v_max / amax[d]) : 0.0;
          }
        }
      }
      for (int hq = hk * group; hq < (hk + 1) * group; ++hq) {
        std::vector<double> q(static_cast<std::size_t>(p.qo_len) * D);
        for (int i = 0; i < p.qo_len; ++i) {
          for (int d = 0; d < D; ++d)
            q[static_cast<std::size_t>(i) * D + d] = p.q[at(b, hq, i, d, p.heads_q, p.qo_len, D)];
        }
        std::vector<double> q_scale;
        const std::vector<double> q8 = quantize_int8(q, p.qo_len, D, q_rows, q_scale);
        for (int i = 0; i < p.qo_len; ++i) {
          double m = -inf, l = 0;
          std::vector<double> o(D, 0.0);
          for (int n0 = 0; n0 < p.kv_len; n0 += block_n) {
            const int n1 = std::min(n0 + block_n, p.kv_len);
            std::vector<double> x(n1 - n0);
            double block_max = -inf;
            for (int j = n0; j < n1; ++j) {
              double dot = 0;
              for (int d = 0; d < D; ++d)
                dot += q8[static_cast<std::size_t>(i) * D + d] *
                       k8[static_cast<std::size_t>(j) * D + d];
              const double scale = q_scale[i / q_rows] * p.sm_scale * kLog2e * k_scale[j / k_rows];
              x[j - n0] = visible(p, i, j) ? dot * scale : -inf;
              block_max = std::max(block_max, x[j - n0]);
            }
            double m_new = std::max(m, block_max);
            // The 16-bit P·V paths keep subtracting its old max while the block's stays within
            // the headroom of it (mma/softmax.cuh and sm90/config.cuh, kMaxHeadroom): P is then
            // rounded at that scale.
            // (FP16 block sums subtract the exact max: P ≤ 1 keeps a block's sum in range.)
            if (pv16 && !fp16_block && !(m_new > m + detail::kMmaMaxHeadroom)) m_new = m;
            const double m_use = m_new == -inf ? 0.0 : m_new;
            const double correction = std::exp2(m - m_use);
            std::vector<double> block(D, 0.0);
            double sum = 0;
            for (int j = n0; j < n1; ++j) {
              const double pj = std::exp2(x[j - n0] - m_use);
              // P in FP16 for FP16 block sums whatever the input's type (the mma's operands).
              const double pq = uses_fp8_v(path)                    ? round_e4m3(pj * 448.0)
                                : dtype == DType::f16 || fp16_block ? round_half(pj)
                                                                    : round_bfloat16(pj);
              // The Hopper kernel sums P on the tensor cores, as rounded for the P·V product.
              sum += path == PvPath::fp8_sm90 ? pq / 448.0 : path == PvPath::fp16_sm90 ? pq : pj;
              for (int d = 0; d < D; ++d)
                block[d] += pq * v[static_cast<std::size_t>(j) * D + d];
            }
            l = l * correction + sum;
            for (int d = 0; d < D; ++d)
              o[d] = o[d] * correction + (fp16_block ? round_half(block[d]) : block[d]);
            m = m_new;
          }
          double km = 0;
          if (smooth_k) {
            for (int d = 0; d < D; ++d)
              km += q[static_cast<std::size_t>(i) * D + d] * mean[d];
          }
          for (int d = 0; d < D; ++d) {
            const double unscale = uses_fp8_v(path) ? amax[d] / (448.0 * v_max) : 1.0;
            out[at(b, hq, i, d, p.heads_q, p.qo_len, D)] = l > 0 ? o[d] * unscale / l : 0.0;
          }
          if (lse) {
            lse[(static_cast<std::size_t>(b) * p.heads_q + hq) * p.qo_len + i] =
                l > 0 ? (m + std::log2(l)) * kLn2 + km * p.sm_scale : -inf;
          }
        }
      }
    }
  }
}

}  // namespace sageattn::reference
