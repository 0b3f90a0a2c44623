// The quantization kernels' launchers (quantize.cu): K's column sums, V's per-channel maxima,
// K to INT8 with per-block or per-warp scales (smoothed by its mean), V to FP8 transposed. (Q is
// quantized by the attention kernels: q_int8.cuh.)
#pragma once

#include <cuda_runtime_api.h>

#include "../common/workspace.h"
#include "sageattn/sageattn.h"

namespace sageattn::detail {

// Runs every quantization step for `p` into `w` on `stream`; returns the first launch error.
cudaError_t quantize_inputs(const Params& p, const Workspace& w, cudaStream_t stream);

}  // namespace sageattn::detail
