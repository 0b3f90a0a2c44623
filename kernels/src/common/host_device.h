// SAGEATTN_HOST_DEVICE: a function the host and the kernels both call (the workspace layout, the
// quantization's job order, the causal mask), so that both sides compute one number one way.
// Plain C++ compilers (the host tests, the reference) see an ordinary inline function.
#pragma once

#if defined(__CUDACC__)
#define SAGEATTN_HOST_DEVICE __host__ __device__
#else
#define SAGEATTN_HOST_DEVICE
#endif
