// Temporal blocking of the Jacobi sweeps of the seven-point Poisson scheme: jacobi3d_blocked
// advances a 3D box up to TIME_STEPS sweeps in one launch with the walk of heat3d_blocked
// (blocked_walk.cl; how it covers the box: heat_blocked.cl), with the bits of as many single sweeps
// of jacobi3d_box (poisson_stencil.cl). Host side: lib/ops/poisson_blocked.cpp.
//
// Build options: those of heat_blocked.cl's 3D kernels (-DBLOCKED_DIMS=3).

#pragma OPENCL FP_CONTRACT OFF

#include "blocked_walk.cl"

__kernel __attribute__((reqd_work_group_size(TILE_X, TILE_Y, 1)))
void jacobi3d_blocked(__global const REAL* restrict u, __global REAL* restrict v, __global const REAL* restrict f,
                      __global REAL* restrict partial, const uint record, const uint pitch, const uint plane,
                      const uint planes, REGION_ARGUMENTS, const uint steps, const uint planes_per_group,
                      const REAL sixth, const REAL h2) {
  __local REAL tiles[2][TILE_H][TILE_X];
  const Region r = REGION;
  const REAL update = walk3d(u, v, f, tiles, true, pitch, plane, planes, r, steps, planes_per_group, sixth, h2);
  if (record == 0) return;  // uniform: a kernel argument
  barrier(CLK_LOCAL_MEM_FENCE);  // the walk's last step may still be reading the plane
  // The group's TILE_X x TILE_Y updates in the first copy of the plane (TILE_H >= TILE_Y rows),
  // indexed row by row: the plane's rows are arrays of their own.
#define MOST(i) tiles[0][(i) / TILE_X][(i) % TILE_X]
  const int lid = (int)(get_local_id(1) * TILE_X + get_local_id(0));
  MOST(lid) = update;
  GROUP_REDUCE(MOST, lid, TILE_X * TILE_Y, larger);
  if (lid == 0) {
    const size_t group = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    partial[group] = MOST(0);
  }
#undef MOST
}
