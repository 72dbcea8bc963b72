// Streaming kernels: the simplest possible memory-bound work. `fill` also serves to ask the
// driver for its preferred work-group multiple; `copy` measures the device's copy bandwidth,
// the streaming limit that the stencil kernels are compared with.
// Build options: -DREAL=float|double, -DREAL_IS_DOUBLE=1 for double.

#ifdef REAL_IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void fill(__global REAL* out, const REAL value, const ulong n) {
  const size_t i = get_global_id(0);
  if (i < n) out[i] = value;
}

__kernel void copy(__global const REAL* restrict in, __global REAL* restrict out, const ulong n) {
  const size_t i = get_global_id(0);
  if (i < n) out[i] = in[i];
}
