// The tensor layout's storage order of element matrices (lib/ops/ebe.cpp, tensor_storage_order),
// made on the device from packed rows in place: the host uploads the caller's packed matrices as
// they are (no host copy, and streamed batches copy at memcpy's speed). A work-group of 32 takes
// elements in a grid-stride loop; a barrier between reading an element and writing it back.
//
// Build options: PACKED (values an element), REAL.

__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void ebe_storage_order(
    const uint count, __global REAL* restrict matrices, __global const ushort* restrict order) {
  __local REAL values[PACKED];
  const uint lane = get_local_id(0);
  for (uint e = get_group_id(0); e < count; e += get_num_groups(0)) {
    __global REAL* m = matrices + (size_t)e * PACKED;
    for (uint i = lane; i < PACKED; i += 32) values[i] = m[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lane; i < PACKED; i += 32) m[i] = values[order[i]];
    barrier(CLK_LOCAL_MEM_FENCE);  // values is read before the next element overwrites it
  }
}
