// Quantization: one launch (after zeroing the statistics). All of it is memory-bound, so the
// design is about bytes, and bytes in flight. K's smoothing needs its mean over the whole
// sequence and V's FP8 scale its per-channel max |v|, both before a single value can be
// quantized; K and V are far larger than L2, so a statistics pass followed by a quantizing pass
// reads them twice from DRAM. Two queues (Q is quantized by the attention kernels as they read
// it, q_int8.cuh):
//
// - The fused queue (fused_quantize_kernel), wherever it can run: each slice of K or V is read
//   once into shared memory and held there while its unit's statistics complete; persistent
//   CTAs in a cooperative launch, each working on three slices at once (one quantized, one
//   whose statistics are added, one in flight). K and V come from DRAM once.
// - The plain queue (quantize_kernel) otherwise (units longer than the resident CTAs can hold,
//   a refused cooperative launch, FP8 V on GPUs with more DRAM bandwidth: plan_jobs): each
//   (batch, KV head) "unit" has statistics jobs and quantizing jobs, and a unit's statistics
//   jobs are queued a fixed distance ahead of its quantizing jobs (queue.h): far
//   enough that the statistics are done when they start (twice as many jobs as the GPU runs at
//   once). Job numbers come from an atomic ticket, not from blockIdx. A job that needs
//   statistics waits (spins) until its unit's statistics jobs have all finished; those have
//   lower tickets, so they were taken by CTAs that are already running, and a statistics job
//   never waits. Waiting therefore cannot deadlock, whatever order the hardware starts CTAs in
//   and however few fit on the GPU. (A CTA also holds the ticket after its current one, see
//   below: a chain of waits still runs to strictly lower tickets, so it ends.) The CTAs are
//   persistent, as many as fit on the GPU at once, each taking tickets until the queue is
//   empty; each takes its next ticket while it works on the current job, so the atomic's round
//   trip is hidden.
//
// Both bring rows with cp.async into a per-thread slice of shared memory (8 loads of 16 bytes
// in flight per thread, 16 or 32 KB per CTA and stage), not registers: registers would hold 4
// CTAs per SM to 2.
//
// The device code by part, all in this one translation unit: quantize/common.cuh (shapes, the
// plan, the counters), statistics.cuh, k_int8.cuh, v_fp8.cuh, fused_queue.cuh, plain_queue.cuh.
// This file: how many CTAs fit (residency), which queue runs and its plan, the launch.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <iterator>
#include <tuple>
#include <utility>

#include "../common/built_head_dims.h"
#include "../common/device_primitives.cuh"
#include "common.cuh"
#include "fused_queue.cuh"
#include "k_int8.cuh"
#include "plain_queue.cuh"
#include "quantize.h"
#include "queue.h"
#include "statistics.cuh"
#include "v_fp8.cuh"

namespace sageattn::detail {
namespace {

// How many CTAs of the kernel the current GPU runs at once, with the plain queue's shared
// memory and with the fused queue's, whether it can launch cooperatively, and its peak DRAM
// bandwidth (cached per device; callers on several host threads may fill the cache at once,
// with the same value).
struct Residency {
  int plain = 0, fused = 0;
  int dram_gbps = 0;  // GB/s, from the memory clock and bus width (0: unknown)
  bool cooperative = false;
};

template <typename T, int D, bool kVarlen>
cudaError_t residency(Residency* r) {
  // Packed as valid(1) | cooperative(1) | dram_gbps(16) | fused(16) | plain(16) bits.
  static std::atomic<std::uint64_t> cached[64] = {};
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device)) return e;
  if (const std::uint64_t known =
          device < 64 ? cached[device].load(std::memory_order_relaxed) : 0) {
    r->plain = static_cast<int>(known & 0xffff);
    r->fused = static_cast<int>(known >> 16 & 0xffff);
    r->dram_gbps = static_cast<int>(known >> 32 & 0xffff);
    r->cooperative = known >> 48 & 1;
    return cudaSuccess;
  }
  int sms = 0, cooperative = 0, plain = 0, fused = 0, memory_khz = 0, bus_bits = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device))
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device))
    return e;
  // Not every platform reports these (0 then, and the bandwidth counts as unknown).
  if (cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    (void)cudaGetLastError();
    memory_khz = bus_bits = 0;
  }
  // More than the 48 KB of shared memory a kernel gets without asking.
  for (const auto& [kernel, bytes, count] :
       {std::tuple{quantize_kernel<T, D, kVarlen>, kSmemBytes<D>, &plain},
        std::tuple{fused_quantize_kernel<T, D, kVarlen>, kFusedSmemBytes<D>, &fused}}) {
    if (cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)) {
      return e;
    }
    if (cudaError_t e =
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(count, kernel, kThreads<D>, bytes)) {
      return e;
    }
  }
  r->plain = std::min(std::max(1, sms * plain), 0xffff);
  r->fused = std::min(sms * fused, 0xffff);
  // Double data rate: two transfers per memory clock.
  const long long gbps = 2LL * memory_khz * (bus_bits / 8) / 1000000;
  r->dram_gbps = static_cast<int>(std::min(gbps, 0xffffLL));
  r->cooperative = cooperative != 0;
  if (device < 64) {
    cached[device].store(std::uint64_t{1} << 49 | std::uint64_t{r->cooperative} << 48 |
                             static_cast<std::uint64_t>(r->dram_gbps) << 32 |
                             static_cast<std::uint64_t>(r->fused) << 16 |
                             static_cast<std::uint64_t>(r->plain),
                         std::memory_order_relaxed);
  }
  return cudaSuccess;
}

// SAGEATTN_QUANT_FUSED, for measurements, read once: "0" never takes the fused queue, "1" takes
// it wherever it can run (ignoring the bandwidth rule below); unset: the rules decide.
enum class FusedMode { rules, never, wherever_possible };
FusedMode fused_mode() {
  static const FusedMode mode = [] {
    const char* env = std::getenv("SAGEATTN_QUANT_FUSED");
    if (env && env[0] == '0') return FusedMode::never;
    if (env && env[0] == '1') return FusedMode::wherever_possible;
    return FusedMode::rules;
  }();
  return mode;
}

// Above this peak DRAM bandwidth the fused queue takes K alone (no FP8 V): see plan_jobs.
constexpr int kFusedMaxDramGBps = 4000;

// The distance between a unit's statistics and its quantizing jobs, in jobs, as a multiple of
// the CTAs the GPU runs at once: SAGEATTN_QUANT_GAP (tenths; default 20 = twice). A tuning
// knob for measurements, read once.
int gap_tenths() {
  static const int tenths = [] {
    const char* env = std::getenv("SAGEATTN_QUANT_GAP");
    const int v = env ? std::atoi(env) : 0;
    return v > 0 ? v : 20;
  }();
  return tenths;
}

template <int D>
JobPlan plan_jobs(const Params& p, const Workspace& w, const Residency& r) {
  JobPlan plan{};
  // A varlen call's sequences lie along the rows: no batch stride (UnitSequence adds the rows).
  const bool varlen = p.is_varlen();
  plan.k = {p.k.data, varlen ? 0 : p.k.stride_batch, p.k.stride_head, p.k.stride_seq};
  plan.v = {p.v.data, varlen ? 0 : p.v.stride_batch, p.v.stride_head, p.v.stride_seq};
  plan.w = w;
  plan.heads_kv = p.heads_kv;
  plan.kv_len = p.kv_len;
  plan.cu_k = p.varlen.cu_seqlens_k;
  plan.total_k = p.varlen.total_k;
  plan.units = p.batch * p.heads_kv;
  plan.smooth_k = p.smooth_k;
  plan.fp8 = uses_fp8_v(p.pv_path);
  plan.v_fp8_max = fp8_v_max(p.pv_accum);
  // Per unit, for the longest sequence: in a varlen call, a shorter sequence's jobs past its
  // region (sequence.h) find no rows and write nothing.
  plan.kv_jobs = (w.kv_pad + kJobRows<D> - 1) / kJobRows<D>;
  const bool needs_statistics = plan.smooth_k || plan.fp8;
  // The fused queue needs each barrier group's slices (a unit's K, or its V) in at most two
  // consecutive rounds of its grid (fused_quantize_kernel): no more slices per group than CTAs
  // resident at once. Where it can run it was faster than the plain queue on an H100 everywhere
  // measured; on an H200 for K alone (the 16-bit P·V paths) but not with V (FP8 paths), so the
  // plain queue keeps V on GPUs above kFusedMaxDramGBps, where its second read of V costs
  // about what the fused queue's waits do (kernels/NOTES.md, quant-fused-vs-plain,
  // quant-fused-pipelined, quant-split-barrier).
  const FusedMode mode = fused_mode();
  const bool fused_pays = mode == FusedMode::wherever_possible ||
                          (r.dram_gbps > 0 && (r.dram_gbps < kFusedMaxDramGBps || !plan.fp8));
  // K's jobs and V's: the plain queue's quantizing jobs, the fused queue's slices.
  // In the fused queue each kind (K, and V on the FP8 paths) of a unit is a barrier group.
  const int kinds = plan.fp8 ? 2 : 1;
  plan.quant_jobs = plan.kv_jobs * kinds;
  const int groups = static_cast<int>(
      std::min<long long>(static_cast<long long>(plan.units) * kinds, 0x7fffffffLL));
  plan.fused = needs_statistics && mode != FusedMode::never && r.cooperative &&
               fused_queue_can_run(groups, plan.kv_jobs, r.fused) && fused_pays;
  if (plan.fused) {  // no tickets, so no queue shape: fused_quantize_kernel deals the slices
    plan.stat_jobs = 0;
    plan.stat_publishes = plan.kv_jobs;  // per barrier group
  } else {
    plan.stat_jobs = needs_statistics ? (p.kv_len + kStatJobRows<D> - 1) / kStatJobRows<D> : 0;
    plan.stat_publishes = plan.stat_jobs;
    const long long gap = static_cast<long long>(r.plain) * gap_tenths() / 10;
    plan.queue = make_queue_shape(plan.units, plan.stat_jobs, plan.quant_jobs,
                                  static_cast<int>(std::min<long long>(gap, 1 << 30)));
  }
  plan.inv_kv_len = 1.f / static_cast<float>(p.kv_len);
  return plan;
}

// kVarlen: the kernels' varlen instantiation (common.cuh: UnitSequence).
template <typename T, int D, bool kVarlen>
cudaError_t launch(const Params& p, const Workspace& w, cudaStream_t stream) {
  Residency r;
  if (cudaError_t e = residency<T, D, kVarlen>(&r)) return e;
  JobPlan plan = plan_jobs<D>(p, w, r);
  auto count_jobs = [&] {
    const long long jobs = static_cast<long long>(plan.units) * (plan.stat_jobs + plan.quant_jobs);
    plan.total_jobs = static_cast<int>(std::min<long long>(jobs, 0x7fffffffLL));
    return jobs;
  };
  if (count_jobs() > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  if (plan.fused) {
    // Cooperative: every CTA of the grid resident at once, which the slices' barrier needs.
    const unsigned ctas = static_cast<unsigned>(std::min(plan.total_jobs, r.fused));
    void* args[] = {&plan};
    const cudaError_t e = cudaLaunchCooperativeKernel(
        reinterpret_cast<const void*>(fused_quantize_kernel<T, D, kVarlen>), dim3(ctas),
        dim3(kThreads<D>), args, kFusedSmemBytes<D>, stream);
    if (e == cudaSuccess) return e;
    // Refused (as under some sharing setups): the plain queue needs no co-residency.
    (void)cudaGetLastError();
    r.cooperative = false;
    plan = plan_jobs<D>(p, w, r);
    if (count_jobs() > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  }
  const unsigned ctas = static_cast<unsigned>(std::min(plan.total_jobs, r.plain));
  quantize_kernel<T, D, kVarlen><<<ctas, kThreads<D>, kSmemBytes<D>, stream>>>(plan);
  return cudaGetLastError();
}

// The call's input type at head dim D.
template <int D, bool kVarlen>
cudaError_t launch_for_type(const Params& p, const Workspace& w, cudaStream_t stream) {
  return p.dtype == DType::f16 ? launch<half, D, kVarlen>(p, w, stream)
                               : launch<__nv_bfloat16, D, kVarlen>(p, w, stream);
}

// A head dim this build left out (common/built_head_dims.h) is not compiled.
template <int D, bool kVarlen>
cudaError_t launch_if_built(const Params& p, const Workspace& w, cudaStream_t stream) {
  if constexpr (head_dim_built(D)) {
    return launch_for_type<D, kVarlen>(p, w, stream);
  } else {
    return cudaErrorNotSupported;
  }
}

// The call's head dim: one instantiation per head dim of the manifest (kSupportedHeadDims), so
// that a head dim added there is quantized as itself; any other is an error, never another
// head dim's layout (validate() refuses it before this).
template <bool kVarlen, std::size_t... I>
cudaError_t launch_for_head_dim(const Params& p, const Workspace& w, cudaStream_t stream,
                                std::index_sequence<I...>) {
  cudaError_t e = cudaErrorInvalidValue;
  (void)((p.head_dim == kSupportedHeadDims[I] &&
          (e = launch_if_built<kSupportedHeadDims[I], kVarlen>(p, w, stream), true)) ||
         ...);
  return e;
}

template <bool kVarlen>
cudaError_t launch_for_head_dim(const Params& p, const Workspace& w, cudaStream_t stream) {
  return launch_for_head_dim<kVarlen>(p, w, stream,
                                      std::make_index_sequence<std::size(kSupportedHeadDims)>{});
}

}  // namespace

cudaError_t quantize_inputs(const Params& p, const Workspace& w, cudaStream_t stream) {
  // The statistics are accumulated with atomics and the queue's counters start at zero.
  if (cudaError_t e = cudaMemsetAsync(w.k_sum, 0, w.stats_bytes, stream)) return e;
  if (p.is_varlen()) return launch_for_head_dim<true>(p, w, stream);
  return launch_for_head_dim<false>(p, w, stream);
}

}  // namespace sageattn::detail
