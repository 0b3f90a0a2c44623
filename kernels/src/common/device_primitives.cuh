// PTX wrappers the kernels are built from: asynchronous copies, ldmatrix, the mma.sync shapes
// we use, FP8 conversion, and the shared-memory swizzle. Each says which PTX ISA section it
// follows; nothing here knows attention.
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>

namespace sageattn::device {

// ---- cp.async (PTX ISA: cp.async): 16-byte global -> shared copies, zero-filled when
// `valid` is false (src-size 0), so tiles past the end of a sequence read as zeros. ----
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
// The same wait for a thread that then reads its own copies with no barrier in between: the
// memory clobber keeps the compiler from moving those shared-memory reads above the wait.
template <int N>
__device__ __forceinline__ void cp_async_wait_own() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- griddepcontrol (PTX ISA: griddepcontrol; sm_90 and later, no-ops before): programmatic
// dependent launch. A kernel launched after this one with the programmatic-serialization
// attribute may start once every CTA of this one has called launch_dependents (or exited); it
// must call wait_for_prerequisites before it reads what this one writes. ----
__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::);
#endif
}
__device__ __forceinline__ void wait_for_prerequisites() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// ---- bar.red (PTX ISA: bar, barrier): named barrier `id` over `threads` threads (a multiple of
// 32) that also ORs a predicate across them: true in every thread if any passed true. ----
__device__ __forceinline__ bool barrier_or(int id, int threads, bool value) {
  unsigned any;
  asm volatile(
      "{\n .reg .pred p, q;\n setp.ne.u32 p, %1, 0;\n bar.red.or.pred q, %2, %3, p;\n"
      " selp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(any)
      : "r"(static_cast<unsigned>(value)), "r"(id), "r"(threads)
      : "memory");
  return any != 0;
}

// One step of a double-buffered loop over key blocks (both mma.sync kernels): block nb + 1's
// copies requested into the other stage, if there is one (load(block, stage)), then block nb's
// awaited, by this thread and, through the barrier, by all.
template <typename Load>
__device__ __forceinline__ void double_buffer_step(int nb, int n_blocks, Load load) {
  if (nb + 1 < n_blocks) load(nb + 1, (nb & 1) ^ 1);
  cp_async_commit();
  cp_async_wait<1>();
  __syncthreads();
}

// ---- ldmatrix (PTX ISA: ldmatrix): four 8x8 b16 matrices (8 rows of 16 bytes each);
// lane i gives the address of row i%8 of matrix i/8 and receives word (lane%4) of row lane/4
// of each matrix. ----
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* smem) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// ---- mma.sync (PTX ISA: warp-level matrix multiply, m16n8k32 / m16n8k16). Fragments:
// A (16xK, row): a0 row g, a1 row g+8, a2 row g (upper k half), a3 row g+8 (upper k half);
// B (Kx8, col): b0 k lower half, b1 k upper half, column g; C (16x8): c0,c1 row g,
// columns 2t,2t+1; c2,c3 row g+8. (g = lane/4, t = lane%4) ----
__device__ __forceinline__ void mma_s8(int (&c)[4], const unsigned (&a)[4], unsigned b0,
                                       unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// d = A·B + c in every element: a first k-step that starts the accumulator at c (the 2^23
// trick's bias) instead of zero, with c in one register.
__device__ __forceinline__ void mma_s8_from(int (&d)[4], const unsigned (&a)[4], unsigned b0,
                                            unsigned b1, int c) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%10,%10,%10};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c));
}

__device__ __forceinline__ void mma_e4m3(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();  // the fp8 path is only launched on sm89+ (checked on the host)
#endif
}

// c += a·b with an FP16 accumulator (two words of half2: row g and row g + 8, columns 2t and
// 2t + 1, as mma_e4m3's c[0..1] and c[2..3]). The FP16-accumulating e4m3 mma.sync needs PTX ISA
// 8.7 (nvcc 12.8); an older toolkit sums in FP32 and rounds the block's sum to FP16, which keeps
// the result's meaning (the block's sum in FP16) at the FP32 instruction's rate.
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
#define SAGEATTN_HAS_F16_E4M3_MMA 1
#else
#define SAGEATTN_HAS_F16_E4M3_MMA 0
#endif
__device__ __forceinline__ void mma_e4m3_f16acc(unsigned (&c)[2], const unsigned (&a)[4],
                                                unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890 && SAGEATTN_HAS_F16_E4M3_MMA
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
      "{%0,%1};\n"
      : "+r"(c[0]), "+r"(c[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&c[0]));
  const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&c[1]));
  float f[4] = {lo.x, lo.y, hi.x, hi.y};
  mma_e4m3(f, a, b0, b1);
  const __half2 l = __floats2half2_rn(f[0], f[1]), h = __floats2half2_rn(f[2], f[3]);
  c[0] = *reinterpret_cast<const unsigned*>(&l);
  c[1] = *reinterpret_cast<const unsigned*>(&h);
#else
  __trap();  // the fp8 path is only launched on sm89+ (checked on the host)
#endif
}

template <typename T>
__device__ __forceinline__ void mma_16bit(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                          unsigned b1) {
  if constexpr (std::is_same_v<T, half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// c += a·b with an FP16 accumulator, f16 inputs (m16n8k16; c as mma_e4m3_f16acc's): the
// 16-bit P·V path's block sums (PvAccum::fp16_block), sm80 and later.
__device__ __forceinline__ void mma_f16_f16acc(unsigned (&c)[2], const unsigned (&a)[4],
                                               unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
      "{%0,%1};\n"
      : "+r"(c[0]), "+r"(c[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- conversions ----
// Two floats to two e4m3 bytes, round to nearest even, saturating: byte 0 = lo, byte 1 = hi.
__device__ __forceinline__ unsigned short pack_e4m3x2(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
#else
  __trap();
  return 0;
#endif
}

template <typename T>
__device__ __forceinline__ unsigned pack_16bit_x2(float lo, float hi) {
  if constexpr (std::is_same_v<T, half>) {
    const half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&h);
  }
}

// Two bf16 values (one word) as two halves: exact for every bf16 inside FP16's range (bf16
// keeps 8 significant bits, FP16 11), ±inf past it, FP16 subnormals below 2^-14.
__device__ __forceinline__ unsigned bf16x2_to_half2(unsigned w) {
  const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w));
  const half2 h = __float22half2_rn(f);
  return *reinterpret_cast<const unsigned*>(&h);
}

// Stores one output row held in the mma accumulator layout: w[j] holds the row's columns
// 8j + 2t and 8j + 2t + 1 (two 16-bit values; t = lane % 4, the quad's threads share the row;
// `row` 16-byte aligned, as the API requires of O). Each 4 tiles are transposed across the quad
// (two shuffle rounds) so that thread t stores tile t's 8 columns with one 16-byte store: 4×
// fewer stores, each of whole 16 bytes, instead of 4-byte pieces. Every lane of the warp must
// call it (shuffles); `active`: the row exists.
template <int kTiles>
__device__ __forceinline__ void store_accumulator_row(const unsigned (&w)[kTiles],
                                                      std::uint16_t* row, bool active, int t) {
  static_assert(kTiles % 4 == 0, "tiles in groups of 4");
  const bool hi = t & 2, odd = t & 1;
#pragma unroll
  for (int q = 0; q < kTiles / 4; ++q) {
    const unsigned* a = w + 4 * q;  // a[k]: tile 4q + k, this thread's column pair
    // Round 1, with thread t ^ 2: tiles 0-1 gather in the lower pair of threads, 2-3 in the
    // upper; c[] is ordered by the source thread's bit 1.
    const unsigned r0 = __shfl_xor_sync(0xffffffffu, hi ? a[0] : a[2], 2);
    const unsigned r1 = __shfl_xor_sync(0xffffffffu, hi ? a[1] : a[3], 2);
    const unsigned c0 = hi ? r0 : a[0], c1 = hi ? r1 : a[1];
    const unsigned c2 = hi ? a[2] : r0, c3 = hi ? a[3] : r1;
    // Round 2, with thread t ^ 1: thread t keeps tile 2·(t >> 1) + (t & 1) = t.
    const unsigned s0 = __shfl_xor_sync(0xffffffffu, odd ? c0 : c1, 1);
    const unsigned s1 = __shfl_xor_sync(0xffffffffu, odd ? c2 : c3, 1);
    const uint4 v = odd ? make_uint4(s0, c1, s1, c3) : make_uint4(c0, s0, c2, s1);
    if (active) *reinterpret_cast<uint4*>(row + 8 * (4 * q + t)) = v;
  }
}

// The 2^23 trick, int32 -> float for |x| < 2^22 with no conversion instruction: the integer
// kSmallIntBiasBits + x, read as a float, is exactly kSmallIntBias + x (= 1.5·2^23 + x). Both
// attention kernels start Q·Kᵀ's int32 accumulator at kSmallIntBiasBits, so the tensor cores
// hand out every score in this "biased" form (no integer add per score; kernels/NOTES.md,
// sm90-score-bias and mma-score-bias); the softmaxes fold the bias's subtraction into their FFMA.
// Biased scores keep the integers' order, so maxima can be taken on them directly.
inline constexpr int kSmallIntBiasBits = 0x4B400000;
inline constexpr float kSmallIntBias = 12582912.f;
__device__ __forceinline__ float biased_score(int bits) {
  return __int_as_float(bits);  // kSmallIntBias + s
}
__device__ __forceinline__ float biased_score_value(int bits) {
  return __int_as_float(bits) - kSmallIntBias;  // s, exactly
}

// ---- INT8 quantization of Q and K: scale max|x| / 127 per group of rows, values rounded to
// nearest. One definition for K's quantization (quantize.cu) and Q's inside the attention
// kernels (quantize_q.cuh), so that both round alike (the host reference models it).
// The factor from values to INT8; 0 for an all-zero group, whose values stay 0.
__device__ __forceinline__ float int8_inverse_scale(float amax) {
  return amax > 0.f ? 127.f / amax : 0.f;
}
// The scale the attention kernels dequantize with: max|x| / 127 times `mult` (Q: sm_scale·log2 e).
__device__ __forceinline__ float int8_scale(float amax, float mult) {
  return amax / 127.f * mult;
}
// Eight values to eight INT8 bytes (byte i = x[i]), as one 8-byte word: __float2int_rn(x · inv)
// exactly (the product rounded to float, then to the nearest integer, ties to even), but on the
// FMA pipe: adding 1.5·2^23 (kSmallIntBias above) leaves the integer in the float's low bits,
// and its low byte is the INT8 in two's complement; byte permutes pack them. F2I conversions run
// at a quarter of the FMA pipe's rate, and the Hopper kernel quantizes 16K values per CTA before
// its first Q·Kᵀ. (One FFMA instead of FMUL + FADD rounds the exact product once: some values
// then differ by 1 from the F2I result, which moved outputs with unsmoothed outlier K and took
// them further from the host reference; kernels/NOTES.md, sm90-q-in-kernel.)
__device__ __forceinline__ uint2 quantize_int8x8(const float (&x)[8], float inv) {
  unsigned bits[8];
#pragma unroll
  for (int i = 0; i < 8; ++i)  // _rn: kept apart, not contracted into an FFMA
    bits[i] = __float_as_uint(__fadd_rn(__fmul_rn(x[i], inv), kSmallIntBias));
  unsigned word[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const unsigned lo = __byte_perm(bits[4 * h], bits[4 * h + 1], 0x0040);      // bytes 0, 1
    const unsigned hi = __byte_perm(bits[4 * h + 2], bits[4 * h + 3], 0x0040);  // bytes 2, 3
    word[h] = __byte_perm(lo, hi, 0x5410);
  }
  return make_uint2(word[0], word[1]);
}

// Eight 16-bit values (one 16-byte load) as floats, and the largest |value| among them (taken on
// the packed pairs: exact, and half the instructions of a float max per value).
template <typename T>
__device__ __forceinline__ float unpack_16bit_x8(const uint4& raw, float (&x)[8]) {
  using T2 = std::conditional_t<std::is_same_v<T, half>, half2, __nv_bfloat162>;
  const T2* pair = reinterpret_cast<const T2*>(&raw);
  const T2 m = __hmax2(__hmax2(__habs2(pair[0]), __habs2(pair[1])),
                       __hmax2(__habs2(pair[2]), __habs2(pair[3])));
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    x[2 * j] = static_cast<float>(pair[j].x);
    x[2 * j + 1] = static_cast<float>(pair[j].y);
  }
  return fmaxf(static_cast<float>(m.x), static_cast<float>(m.y));
}

// The largest of x[0..N) (N a power of two), as a tree rather than a chain: shorter dependency
// chains for the softmaxes' row maxima. Overwrites x.
template <int N>
__device__ __forceinline__ float max_tree(float (&x)[N]) {
  static_assert((N & (N - 1)) == 0, "a power of two");
#pragma unroll
  for (int width = N / 2; width > 0; width /= 2) {
#pragma unroll
    for (int i = 0; i < width; ++i)
      x[i] = fmaxf(x[i], x[i + width]);
  }
  return x[0];
}

// The maximum over the 4 threads of a quad (which share an mma accumulator row).
__device__ __forceinline__ float quad_max(float m) {
  m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
  return fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// ---- shared-memory swizzle: tiles of rows of ROW_BYTES, addressed in 16-byte chunks. The
// chunk index is XORed with a function of the row so that the 8 rows one ldmatrix reads at the
// same logical chunk land in 8 different bank groups (no conflicts). The row is given as
// 8·row8 + r (r < 8), as ldmatrix addresses are formed (r = lane % 8): the swizzle then depends
// on r alone, so the compiler sees that rows a multiple of 8 apart differ by a constant, which
// the load takes as an immediate offset. Computed from the whole row, it kept one register per
// row and chunk of a tile and spilled them (kernels/NOTES.md, mma-32-rows-per-warp). ----
// (Rows of 32 bytes, the Hopper kernel's d=96 boxes: the TMA's and wgmma's 32-byte swizzle.)
template <int ROW_BYTES>
__device__ __forceinline__ int swizzled_offset(int row8, int r, int chunk) {
  static_assert(ROW_BYTES == 32 || ROW_BYTES == 64 || ROW_BYTES % 128 == 0,
                "rows of 32 or 64 bytes or multiples of 128");
  constexpr int kChunks = ROW_BYTES / 16;
  const int x = kChunks >= 8 ? r : kChunks == 4 ? ((r >> 1) & 3) : ((r >> 2) & 1);
  return (row8 * 8 + r) * ROW_BYTES + ((chunk ^ x) * 16);
}

// Lanes that hold one row of d 16-bit channels in 16-byte chunks, as the quantization kernels and
// the attention kernels' Q quantization load rows: d/8 rounded up to a power of two, so that a warp
// holds whole rows; rows of 12 or 24 chunks (d=96, 192) leave their last 4 or 8 lanes idle.
__host__ __device__ constexpr int row_lanes(int d) {
  int lanes = 1;
  while (lanes < d / 8)
    lanes *= 2;
  return lanes;
}

// The Hopper kernel's tiles of rows wider than its 128-byte swizzle (d=256: Q and K rows of 256
// INT8 bytes): the TMA brings such a tile in boxes of BOX_BYTES-wide columns, and a wgmma
// k-step reads one box, so the tile is stored box after box, each box a swizzled tile of
// BOX_ROWS rows of BOX_BYTES (the 64 rows of a consumer warpgroup, for the Q tile). Rows are
// BOX_ROWS-row groups of ROW_BYTES; with BOX_BYTES == ROW_BYTES this is swizzled_offset.
template <int ROW_BYTES, int BOX_BYTES, int BOX_ROWS>
__device__ __forceinline__ int boxed_offset(int row8, int r, int chunk) {
  if constexpr (BOX_BYTES == ROW_BYTES) {
    return swizzled_offset<ROW_BYTES>(row8, r, chunk);
  } else {
    static_assert(ROW_BYTES % BOX_BYTES == 0 && BOX_ROWS % 8 == 0);
    constexpr int kBoxChunks = BOX_BYTES / 16, kGroup8 = BOX_ROWS / 8;
    return row8 / kGroup8 * (BOX_ROWS * ROW_BYTES) + chunk / kBoxChunks * (BOX_ROWS * BOX_BYTES) +
           swizzled_offset<BOX_BYTES>(row8 % kGroup8, r, chunk % kBoxChunks);
  }
}

}  // namespace sageattn::device
