// The plain queue: statistics jobs queued a fixed distance ahead of the quantizing jobs of their
// unit (queue.h), tickets from an atomic, persistent CTAs.
// Part of quantize.cu's one translation unit (its anonymous namespace): included there only.
#pragma once

#include "common.cuh"
#include "k_int8.cuh"
#include "statistics.cuh"
#include "v_fp8.cuh"

namespace sageattn::detail {
namespace {

// --- the plain queue --------------------------------------------------------------------------

template <typename T, int D, bool kVarlen>
__device__ void run_job(const JobPlan& p, const JobRef& ref, const Stage<D>& stage,
                        std::uint32_t* scratch) {
  const int unit = ref.unit;
  const int b = unit / p.heads_kv, hk = unit % p.heads_kv;
  float* scratch_f = reinterpret_cast<float*>(scratch);
  int job = ref.job;
  if (job < p.stat_jobs) {
    statistics_job<T, D, kVarlen>(p, b, hk, job, stage, scratch_f);
    publish_statistics(p, unit, /*is_v=*/false);  // the plain queue: one counter per unit
    return;
  }
  job -= p.stat_jobs;  // per unit: its statistics, then its K and V jobs
  const bool is_v = job >= p.kv_jobs;
  // A varlen sequence shorter than the call's longest: nothing to load or write.
  if (UnitSequence<kVarlen>(p, b, hk).template past_region<D>(is_v ? job - p.kv_jobs : job)) return;
  RowsTarget k = k_target<D, kVarlen>(p, b, hk);
  // The copies first: they need no statistics, so their latency overlaps the wait.
  if (is_v) {
    if constexpr (kQuantizesV<D>) issue_v<T, D, kVarlen>(p, b, hk, job - p.kv_jobs, stage);
  } else {
    issue_rows<T, D>(k, job, stage);
  }
  device::cp_async_commit();
  if (p.stat_jobs > 0) k.k_sum = wait_for_statistics<D>(p, b, hk, is_v, scratch_f);
  device::cp_async_wait_own<0>();
  if (is_v) {
    if constexpr (kQuantizesV<D>)
      quantize_v<T, D, kVarlen>(p, b, hk, job - p.kv_jobs, stage, scratch);
  } else {
    quantize_rows<T, D>(k, job, stage, scratch_f);
  }
}

// The plain queue: its shared memory allows kMinBlocks CTAs per SM (4 of 256 threads, 8 of 128)
// and it gets their registers (kernels/NOTES.md, quant-persistent-cp-async).
template <typename T, int D, bool kVarlen>
__global__ void __launch_bounds__(kThreads<D>, kMinBlocks<D>)
    quantize_kernel(const __grid_constant__ JobPlan p) {
  __shared__ int next_ticket;
  extern __shared__ uint4 dynamic_smem[];  // the stage, then the scratch: kSmemBytes
  const Stage<D> stage{dynamic_smem};
  std::uint32_t* scratch =
      reinterpret_cast<std::uint32_t*>(dynamic_smem + kLoadsPerThread * kThreads<D>);
  if (threadIdx.x == 0) next_ticket = take_ticket(p);
  __syncthreads();
  for (int ticket = next_ticket; ticket < p.total_jobs;) {
    // The next ticket is taken now and stored only after the job: the atomic's round trip
    // overlaps the job's loads.
    const JobRef ref = decode_ticket(p.queue, ticket);
    int prefetched = 0;
    if (threadIdx.x == 0) prefetched = take_ticket(p);
    run_job<T, D, kVarlen>(p, ref, stage, scratch);
    __syncthreads();  // the job is done with `scratch` and `next_ticket`
    if (threadIdx.x == 0) next_ticket = prefetched;
    __syncthreads();
    ticket = next_ticket;
  }
}

}  // namespace
}  // namespace sageattn::detail
