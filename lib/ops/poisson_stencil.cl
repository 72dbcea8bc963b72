// Jacobi sweeps of the seven-point Poisson scheme over a box of a grid in device memory: the
// kernels of the in-device Poisson solver and of its pyramid passes (method notes, section 2), and
// the reduction of the last sweep's update for the stopping test. Host side:
// lib/ops/poisson_stencil.cpp.
//
// jacobi3d_box launches like heat3d_box (heat_stencil.cl): work-groups of TILE_X x TILE_Y aligned
// to absolute buffer columns from `first_column`, each work-item walking `planes_per_group` planes
// of its (x, y) column. Like heat3d_box it reads the x and y neighbours straight from global
// memory, where the caches serve them (the group's neighbouring columns load the same lines), and
// needs no barrier per plane, faster than a local-memory tile
// (bench/results/2026-11-28-design-measurements.md). It reads
// the right-hand side f at the nodes it computes. The update is the one of
// include/ziggurat/ops/poisson_scheme.hpp, with no contraction into fused multiply-add, so that the
// kernels and the CPU reference round exactly alike.
//
// With `record` set, each work-group also writes the largest |U' - U| of its nodes to
// partial[its linear group number]; NaN wins every comparison, so that a diverged field is never
// taken for a converged one. max_reduce then folds those partial maxima into one value.
//
// Build options: -DREAL (the prologue), -DTILE_X, -DTILE_Y, -DREDUCE_GROUP (max_reduce's width),
// -DFLAT_KERNELS (1 on CPU devices), -DFLAT_ITEMS (jacobi3d_flat's largest work-group).

#pragma OPENCL FP_CONTRACT OFF

#include "base/group_reduce.cl"

#define MOST(i) most[i]  // the slots of GROUP_REDUCE in both kernels

__kernel __attribute__((reqd_work_group_size(TILE_X, TILE_Y, 1)))
void jacobi3d_box(__global const REAL* restrict u, __global REAL* restrict v, __global const REAL* restrict f,
                  __global REAL* restrict partial, const uint record, const uint pitch, const uint plane,
                  const uint first_column, const uint x0, const uint x1, const uint y0, const uint y1, const uint z0,
                  const uint z1, const uint planes_per_group, const REAL sixth, const REAL h2) {
  __local REAL most[TILE_X * TILE_Y];
  const uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);
  const uint x = first_column + (uint)get_global_id(0);
  const uint y = y0 + (uint)get_global_id(1);
  const uint plane_begin = z0 + (uint)get_group_id(2) * planes_per_group;
  const uint plane_end = min(plane_begin + planes_per_group, z1);
  const bool active = x >= x0 && x < x1 && y < y1;
  size_t c = (size_t)plane_begin * plane + (size_t)y * pitch + x;
  REAL behind = active ? u[c - plane] : (REAL)0;
  REAL here = active ? u[c] : (REAL)0;
  REAL front = active ? u[c + plane] : (REAL)0;
  REAL source = active && plane_begin < plane_end ? f[c] : (REAL)0;
  REAL update = (REAL)0;
  // Each work-item keeps the planes behind, at and in front in registers and loads two planes ahead
  // of u and one of f an iteration before use, so that several loads cover the memory latency.
  for (uint z = plane_begin; z < plane_end; ++z) {
    const REAL ahead = active && z + 2 <= z1 ? u[c + 2 * (size_t)plane] : (REAL)0;
    const REAL next_source = active && z + 1 < plane_end ? f[c + plane] : (REAL)0;
    if (active) {
      const REAL sum = ((((u[c - 1] + u[c + 1]) + u[c - pitch]) + u[c + pitch]) + behind) + front;
      const REAL next = sixth * (sum + h2 * source);
      v[c] = next;
      update = larger(update, fabs(next - here));
    }
    behind = here;
    here = front;
    front = ahead;
    source = next_source;
    c += plane;
  }
  if (record == 0) return;  // uniform: a kernel argument
  const uint lid = ly * TILE_X + lx;
  most[lid] = update;
  GROUP_REDUCE(MOST, lid, TILE_X * TILE_Y, larger);
  if (lid == 0) {
    const size_t group = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    partial[group] = most[0];
  }
}

#if FLAT_KERNELS
// On CPU devices (ops/heat_stencil.hpp's runs_flat_kernels), launched as heat3d_flat (flat_launch:
// groups as wide as the box, of at most FLAT_ITEMS work-items): one work-item a node of plane z0 +
// global id 2, every neighbour read from global memory, the same arithmetic as jacobi3d_box. The
// sweep has no barrier, so PoCL vectorises it along x (jacobi3d_box's walk along z does not
// vectorise there); the group's largest update is folded after it.
__kernel void jacobi3d_flat(__global const REAL* restrict u, __global REAL* restrict v, __global const REAL* restrict f,
                            __global REAL* restrict partial, const uint record, const uint pitch, const uint plane,
                            const uint first_column, const uint x0, const uint x1, const uint y0, const uint y1,
                            const uint z0, const REAL sixth, const REAL h2) {
  __local REAL most[FLAT_ITEMS];
  const uint x = first_column + (uint)get_global_id(0);
  const uint y = y0 + (uint)get_global_id(1);
  REAL update = (REAL)0;
  if (x >= x0 && x < x1 && y < y1) {
    const size_t c = (size_t)(z0 + (uint)get_global_id(2)) * plane + (size_t)y * pitch + x;
    const REAL sum = ((((u[c - 1] + u[c + 1]) + u[c - pitch]) + u[c + pitch]) + u[c - plane]) + u[c + plane];
    const REAL next = sixth * (sum + h2 * f[c]);
    v[c] = next;
    update = larger(update, fabs(next - u[c]));
  }
  if (record == 0) return;  // uniform: a kernel argument
  // Folded down the columns (the first row's work-items, which PoCL vectorises), then along that
  // row: linear work. PoCL runs every work-item of the group at each barrier, so GROUP_REDUCE's
  // tree of log2(group) barriers cost it 12 passes over the 4096 items (0.77 s a stopping test on
  // a 256^3 grid).
  const uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);
  const uint width = (uint)get_local_size(0), rows = (uint)get_local_size(1);
  most[ly * width + lx] = update;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (ly == 0) {
    REAL column_most = most[lx];
    for (uint r = 1; r < rows; ++r) column_most = larger(column_most, most[r * width + lx]);
    most[lx] = column_most;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lx == 0 && ly == 0) {
    REAL group_most = most[0];
    for (uint i = 1; i < width; ++i) group_most = larger(group_most, most[i]);
    const size_t group = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    partial[group] = group_most;
  }
}
#endif

// One work-group of REDUCE_GROUP folds values[0 .. count) into result[slot] with larger().
__kernel __attribute__((reqd_work_group_size(REDUCE_GROUP, 1, 1)))
void max_reduce(__global const REAL* restrict values, const uint count, __global REAL* restrict result, const uint slot) {
  __local REAL most[REDUCE_GROUP];
  const uint lid = (uint)get_local_id(0);
  REAL local_most = (REAL)0;
  for (uint i = lid; i < count; i += REDUCE_GROUP) local_most = larger(local_most, values[i]);
  most[lid] = local_most;
  GROUP_REDUCE(MOST, lid, REDUCE_GROUP, larger);
  if (lid == 0) result[slot] = most[0];
}
