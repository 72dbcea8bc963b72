// Streaming kernels: the simplest possible work. `fill` sets a buffer to a value through a kernel
// (which Oclgrind's uninitialised-value check sees, unlike clEnqueueFillBuffer); `copy` measures
// the device's copy bandwidth, the streaming limit the stencil kernels are compared with; `empty`
// does nothing, so its time is the cost of a launch. Host side: lib/ops/stream.cpp.

__kernel void fill(__global REAL* out, const REAL value, const ulong n) {
  const size_t i = get_global_id(0);
  if (i < n) out[i] = value;
}

__kernel void copy(__global const REAL* restrict in, __global REAL* restrict out, const ulong n) {
  const size_t i = get_global_id(0);
  if (i < n) out[i] = in[i];
}

__kernel void empty(void) {}
