// What a second attention launch costs when it has nothing to do (measurement only, not part of
// any build): the price on ordinary inputs of routing sharp tiles to another kernel without
// the host (docs/kernels.md, "Sharp attention"). Launched after a kernel that flags no tile:
//   full grid    every tile's CTA (the attention kernel's shape: 384 threads, one CTA per SM by
//                its shared memory) reads its tile's flag and returns;
//   worklist     one CTA per SM reads the count of flagged tiles (0) and returns.
// Each is timed over back-to-back launches (CUDA events), against an empty kernel of one CTA (the
// floor of any launch): from the host on a stream ("stream": bound by the host's launch rate when
// the GPU has nothing else to do), and replayed from a CUDA graph ("graph": the GPU's own time per
// launch, what a launch queued behind an attention kernel adds).
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a empty_grid.cu -o empty_grid && ./empty_grid
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kThreads = 384;
constexpr int kSmemBytes = 200 * 1024;  // one CTA per SM, as the attention kernel
constexpr int kLaunches = 200;

__global__ void one_cta() {}

__global__ void __launch_bounds__(kThreads, 1) full_grid(const int* flags) {
  extern __shared__ unsigned char smem[];
  const int tile = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (flags[tile] == 0) return;
  smem[threadIdx.x] = 1;  // (never reached here: keeps the shared memory in use)
}

__global__ void __launch_bounds__(kThreads, 1) worklist(const int* count) {
  extern __shared__ unsigned char smem[];
  if (*count == 0) return;
  smem[threadIdx.x] = 1;
}

struct Timing {
  float stream_us, graph_us;
};

// launch(stream) issues one launch on `stream`.
template <class Launch>
Timing microseconds_per_launch(Launch launch) {
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  auto elapsed_us = [&](auto body) {
    cudaEventRecord(start, stream);
    body();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0.f;
    cudaEventElapsedTime(&ms, start, stop);
    return 1000.f * ms;
  };
  for (int i = 0; i < 20; ++i)
    launch(stream);  // warm-up
  Timing t{};
  t.stream_us = elapsed_us([&] {
                  for (int i = 0; i < kLaunches; ++i)
                    launch(stream);
                }) /
                kLaunches;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < kLaunches; ++i)
    launch(stream);
  cudaStreamEndCapture(stream, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphLaunch(exec, stream);  // warm-up
  t.graph_us = elapsed_us([&] { cudaGraphLaunch(exec, stream); }) / kLaunches;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return t;
}

void print_timing(const char* name, Timing t) {
  std::printf("\"%s\": {\"stream_us\": %.2f, \"graph_us\": %.2f}", name, t.stream_us, t.graph_us);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaFuncSetAttribute(full_grid, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  cudaFuncSetAttribute(worklist, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  int* flags = nullptr;
  constexpr int kMaxTiles = 32768 / 128 * 32;
  cudaMalloc(&flags, kMaxTiles * sizeof(int));
  cudaMemset(flags, 0, kMaxTiles * sizeof(int));
  std::printf("{\"sms\": %d, ", sms);
  print_timing("one_cta",
               microseconds_per_launch([](cudaStream_t s) { one_cta<<<1, 32, 0, s>>>(); }));
  std::printf(", ");
  // The count reset for the next call (a memset node in a graph) and the worklist launch.
  print_timing("reset_and_worklist", microseconds_per_launch([&](cudaStream_t s) {
                 cudaMemsetAsync(flags, 0, sizeof(int), s);  // the count worklist reads
                 worklist<<<sms, kThreads, kSmemBytes, s>>>(flags);
               }));
  std::printf(", ");
  print_timing("worklist", microseconds_per_launch([&](cudaStream_t s) {
                 worklist<<<sms, kThreads, kSmemBytes, s>>>(flags);
               }));
  // The attention grids of b·s = 32k tokens (any length: 8,192 tiles of 128 rows, 32 heads) and
  // of one 1k-token sequence (256).
  std::printf(", \"full_grid\": {");
  for (const int ctas : {256, 8192}) {
    const dim3 grid(ctas / 32, 32);  // tiles, heads
    char name[32];
    std::snprintf(name, sizeof name, "%d", ctas);
    if (ctas > 256) std::printf(", ");
    print_timing(name, microseconds_per_launch([&](cudaStream_t s) {
                   full_grid<<<grid, kThreads, kSmemBytes, s>>>(flags);
                 }));
  }
  std::printf("}}\n");
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "empty_grid: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
