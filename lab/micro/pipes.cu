// Which pipes the softmax's instruction kinds use on one SM sub-partition (SMSP), and at what
// rate (measurement only, not part of any build). Each warp runs kChains independent chains of
// one step (one or more instructions); with 1-4 warps per SMSP the SM clock over the loop gives
// cycles per step per SMSP. Two kinds that share a pipe add up when mixed; kinds on different
// pipes overlap. Steps with "+IADD" consume a result so that it is not optimised away; the
// "…+IADD" baselines without the instruction under test are listed too.
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a pipes.cu -o pipes && ./pipes
#include <cstdio>

constexpr int kChains = 8;
constexpr int kIters = 2048;

enum Step {
  kEx2,           // f = ex2(f)
  kFfma,          // g = ffma(g)
  kIadd,          // n = n + 3
  kI2fp,          // n = bits(float(n))
  kFfmaIadd,      // g = ffma(g); u += bits(g)              (baseline of the next)
  kFfmaF2fpIadd,  // g = ffma(g); u += e4m3x2(g, g)
  kEx2Iadd,       // f = ex2(f); u += bits(f)               (baseline of the next)
  kEx2F2fpIadd,   // f = ex2(f); u += e4m3x2(f, f)
  kEx2Ffma,       // f = ex2(f); g = ffma(g)
  kEx2I2fp,       // f = ex2(f); n = bits(float(n))
  kSteps
};
const char* kNames[kSteps] = {"EX2",       "FFMA",           "IADD",     "I2FP",
                              "FFMA+IADD", "FFMA+F2FP+IADD", "EX2+IADD", "EX2+F2FP+IADD",
                              "EX2+FFMA",  "EX2+I2FP"};

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ unsigned f2fp(float a, float b) {
  unsigned short r;
  asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(a), "f"(b));
  return r;
}
__device__ __forceinline__ int i2fp(int x) {
  float y;
  asm volatile("cvt.rn.f32.s32 %0, %1;" : "=f"(y) : "r"(x));
  return __float_as_int(y);
}
__device__ __forceinline__ float ffma(float a) {
  float y;
  asm volatile("fma.rn.f32 %0, %1, 0f3F7FBE77, 0f3A83126F;" : "=f"(y) : "f"(a));
  return y;
}
__device__ __forceinline__ int iadd(int a, int b) {
  int y;
  asm volatile("add.s32 %0, %1, %2;" : "=r"(y) : "r"(a), "r"(b));
  return y;
}

template <int kStep>
__global__ void pipes(int* out, long long* cycles, float seed) {
  float f[kChains], g[kChains];
  int n[kChains], u[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) {
    f[c] = seed * (c + 1) * 1e-3f;
    g[c] = seed * (c + 2) * 1e-3f;
    n[c] = threadIdx.x + c;
    u[c] = c;
  }
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 4
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      switch (kStep) {
        case kEx2:
          f[c] = ex2(f[c]);
          break;
        case kFfma:
          g[c] = ffma(g[c]);
          break;
        case kIadd:
          n[c] = iadd(n[c], 3);
          break;
        case kI2fp:
          n[c] = i2fp(n[c]);
          break;
        case kFfmaIadd:
          g[c] = ffma(g[c]);
          u[c] = iadd(u[c], __float_as_int(g[c]));
          break;
        case kFfmaF2fpIadd:
          g[c] = ffma(g[c]);
          u[c] = iadd(u[c], f2fp(g[c], g[c]));
          break;
        case kEx2Iadd:
          f[c] = ex2(f[c]);
          u[c] = iadd(u[c], __float_as_int(f[c]));
          break;
        case kEx2F2fpIadd:
          f[c] = ex2(f[c]);
          u[c] = iadd(u[c], f2fp(f[c], f[c]));
          break;
        case kEx2Ffma:
          f[c] = ex2(f[c]);
          g[c] = ffma(g[c]);
          break;
        case kEx2I2fp:
          f[c] = ex2(f[c]);
          n[c] = i2fp(n[c]);
          break;
      }
    }
  }
  const long long t1 = clock64();
  __syncthreads();
  int acc = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c)
    acc += __float_as_int(f[c]) ^ __float_as_int(g[c]) ^ n[c] ^ u[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  if (threadIdx.x % 32 == 0) cycles[threadIdx.x / 32] = t1 - t0;
}

template <int kStep>
void run(int* out, long long* cycles) {
  printf("%-16s", kNames[kStep]);
  for (int warps_per_smsp : {1, 2, 4}) {
    const int threads = 32 * 4 * warps_per_smsp;
    pipes<kStep><<<1, threads>>>(out, cycles, 1.f);
    long long host[16] = {};
    cudaMemcpy(host, cycles, sizeof(long long) * threads / 32, cudaMemcpyDeviceToHost);
    long long worst = 0;
    for (int w = 0; w < threads / 32; ++w)
      worst = host[w] > worst ? host[w] : worst;
    const double steps = static_cast<double>(kIters) * kChains * warps_per_smsp;
    printf("  %d warps: %5.2f", warps_per_smsp, worst / steps);
  }
  printf("\n");
}

int main() {
  int* out;
  long long* cycles;
  cudaMalloc(&out, 1 << 20);
  cudaMalloc(&cycles, 1024);
  printf("cycles per step per SM sub-partition (warps per sub-partition; %d chains per warp)\n",
         kChains);
  run<kEx2>(out, cycles);
  run<kFfma>(out, cycles);
  run<kIadd>(out, cycles);
  run<kI2fp>(out, cycles);
  run<kFfmaIadd>(out, cycles);
  run<kFfmaF2fpIadd>(out, cycles);
  run<kEx2Iadd>(out, cycles);
  run<kEx2F2fpIadd>(out, cycles);
  run<kEx2Ffma>(out, cycles);
  run<kEx2I2fp>(out, cycles);
  return cudaDeviceSynchronize() != cudaSuccess;
}
