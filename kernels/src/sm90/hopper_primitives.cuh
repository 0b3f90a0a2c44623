// PTX wrappers for the Hopper (sm_90a) kernel: mbarriers, bulk tensor copies (TMA), wgmma
// descriptors, fences and fences around wgmma operands, setmaxnreg. Each says which PTX ISA
// section it follows. The wgmma instructions themselves are in wgmma_ops.cuh (generated).
// Nothing here knows attention.
#pragma once

#include <cstdint>
#include <cuda.h>
#include <type_traits>

namespace sageattn::sm90 {

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarrier (PTX ISA: mbarrier). A phase completes when `count` arrivals happened and the
// expected transaction bytes (TMA) have landed; waiters name the parity of the phase. ----
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count));
}
// Makes the initialised barriers visible to the async proxy (TMA) and the other threads; a
// __syncthreads() follows it.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
}
// Spins until the phase of `parity` has completed. try_wait suspends the thread for a
// hardware-chosen time before it returns false, so the loop does not hammer the barrier.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
}

// Orders this thread's ordinary shared-memory stores before later reads by the async proxy
// (wgmma operands, TMA): each writing thread fences, then a barrier.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- bulk tensor copy (PTX ISA: cp.async.bulk.tensor): one 3-D box of `map` at coordinates
// (c0 innermost) into shared memory, completing `bar`'s transaction count. Out-of-bounds
// elements arrive as zeros. ----
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
// The same for a 4-D box (the caller's V: channels, keys, head, batch).
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1), "r"(c2),
      "r"(c3)
      : "memory");
}
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// ---- wgmma matrix descriptors (PTX ISA: "Matrix Descriptor Format"). K-major operands in the
// layout the TMA writes with 128-, 64- or 32-byte swizzling: rows of SWIZZLE bytes, 8-row groups
// SWIZZLE*8 bytes apart (the stride byte offset); the leading byte offset is unused for swizzled
// K-major tiles whose k extent fits in one row. The tile base must be 1024-byte aligned; a
// k-step inside the row is a plain byte offset on the start address (the hardware applies the
// swizzle to the final address, as the TMA did). ----
template <int SWIZZLE>
__device__ __forceinline__ std::uint64_t make_smem_desc(const void* tile) {
  static_assert(SWIZZLE == 128 || SWIZZLE == 64 || SWIZZLE == 32, "128-, 64- or 32-byte swizzle");
  const std::uint64_t start = (smem_address(tile) & 0x3FFFF) >> 4;
  const std::uint64_t leading = 1;
  const std::uint64_t stride = (SWIZZLE * 8) >> 4;
  const std::uint64_t mode = SWIZZLE == 128 ? 1 : SWIZZLE == 64 ? 2 : 3;
  return start | (leading << 16) | (stride << 32) | (mode << 62);
}
// MN-major tiles (16-bit types only, read with imm-trans-b) as the TMA writes rows of 128
// swizzled bytes along MN (64 16-bit values), one row per k: the canonical layout is then
// 8-row (k) groups 1024 bytes apart (the stride byte offset) and 64-wide MN blocks
// `mn_block_bytes` apart (the leading byte offset: the TMA's separate boxes). A k-step is a
// plain offset of 128 bytes per k on the start address.
__device__ __forceinline__ std::uint64_t make_smem_desc_mn128(const void* tile,
                                                              unsigned mn_block_bytes) {
  const std::uint64_t start = (smem_address(tile) & 0x3FFFF) >> 4;
  const std::uint64_t leading = mn_block_bytes >> 4;
  const std::uint64_t stride = 1024 >> 4;
  return start | (leading << 16) | (stride << 32) | (std::uint64_t{1} << 62);
}
// The descriptor of the same tile `bytes` further along K (bytes a multiple of 16).
__device__ __forceinline__ std::uint64_t advance_desc(std::uint64_t desc, int bytes) {
  return desc + static_cast<std::uint64_t>(bytes >> 4);
}

// ---- wgmma ordering (PTX ISA: wgmma.fence, commit_group, wait_group) ----
// Before the first wgmma that reads registers (accumulators, A fragments) other instructions
// wrote.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads or writes of an in-flight wgmma's registers across the
// wait: an empty asm that claims to read and write them.
template <typename T, int N>
__device__ __forceinline__ void fence_operands(T (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    // Floats as floats: through an integer constraint they would be copied between register
    // types, and a copy into a wgmma accumulator after wgmma.fence makes ptxas inject its own
    // fence (C7519) and serialize the wgmma (C7520).
    if constexpr (std::is_same_v<T, float>) {
      asm volatile("" : "+f"(r[i])::"memory");
    } else if constexpr (sizeof(T) == 4) {
      asm volatile("" : "+r"(*reinterpret_cast<unsigned*>(&r[i]))::"memory");
    }
  }
}

// ---- register reallocation between warpgroups (PTX ISA: setmaxnreg) ----
template <int REGS>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// ---- named barriers (PTX ISA: bar.sync, bar.arrive) among a subset of the CTA's warps: the
// barrier completes when `threads` have arrived; sync waits for that, arrive does not. ----
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace sageattn::sm90
