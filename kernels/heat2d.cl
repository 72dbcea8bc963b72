// Explicit five-point heat step on a 2D grid in device memory (method notes, section 1).
// Host side and the statement of the scheme: include/ziggurat/heat.hpp, lib/heat.cpp.
// Build options: -DREAL=float|double, -DREAL_IS_DOUBLE=1 for double.

#ifdef REAL_IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
// No contraction into fused multiply-add: every implementation of the step (the CPU reference,
// this kernel, the pyramid kernels) must round exactly alike.
#pragma OPENCL FP_CONTRACT OFF

// One work-item per interior node (x, y) = (global id 0 + 1, global id 1 + 1); rows are `pitch`
// values apart. Boundary nodes are never written: both buffers hold them from the upload.
__kernel void heat2d_step(__global const REAL* restrict u, __global REAL* restrict v,
                          const uint width, const uint height, const uint pitch,
                          const REAL a, const REAL b) {
  const uint x = (uint)get_global_id(0) + 1;
  const uint y = (uint)get_global_id(1) + 1;
  if (x + 1 >= width || y + 1 >= height) return;
  const size_t c = (size_t)y * pitch + x;
  const REAL sum = ((u[c - 1] + u[c + 1]) + u[c - pitch]) + u[c + pitch];
  v[c] = a * sum + b * u[c];
}
