// Jacobi sweeps of the seven-point Poisson scheme over a box of a grid in device memory: the
// kernels of the in-device Poisson solver and of its pyramid passes (method notes, section 2), and
// the reduction of the last sweep's update for the stopping test. Host side:
// lib/ops/poisson_stencil.cpp.
//
// jacobi3d_box has the shape of heat3d_box (heat_stencil.cl): work-groups of TILE_X x TILE_Y
// aligned to absolute buffer columns from `first_column`, each work-item walking `planes_per_group`
// planes of its (x, y) column with the planes behind, at and in front in registers, x and y
// neighbours through a double-buffered local tile. It reads the right-hand side f at the nodes it
// computes. The update is the one of include/ziggurat/ops/poisson_scheme.hpp, with no contraction
// into fused multiply-add, so that the kernels and the CPU reference round exactly alike.
//
// With `record` set, each work-group also writes the largest |U' - U| of its nodes to
// partial[its linear group number]; NaN wins every comparison, so that a diverged field is never
// taken for a converged one. max_reduce then folds those partial maxima into one value.
//
// Build options: -DREAL (the prologue), -DTILE_X, -DTILE_Y, -DREDUCE_GROUP (max_reduce's width).

#pragma OPENCL FP_CONTRACT OFF

inline REAL larger(const REAL a, const REAL b) { return isnan(a) || a > b ? a : b; }

__kernel __attribute__((reqd_work_group_size(TILE_X, TILE_Y, 1)))
void jacobi3d_box(__global const REAL* restrict u, __global REAL* restrict v, __global const REAL* restrict f,
                  __global REAL* restrict partial, const uint record, const uint pitch, const uint plane,
                  const uint first_column, const uint x0, const uint x1, const uint y0, const uint y1, const uint z0,
                  const uint z1, const uint planes_per_group, const REAL sixth, const REAL h2) {
  __local REAL tile[2][TILE_Y + 2][TILE_X + 2];
  __local REAL most[TILE_X * TILE_Y];
  const uint lx = (uint)get_local_id(0), ly = (uint)get_local_id(1);
  const uint x = first_column + (uint)get_global_id(0);
  const uint y = y0 + (uint)get_global_id(1);
  const uint plane_begin = z0 + (uint)get_group_id(2) * planes_per_group;
  const uint plane_end = min(plane_begin + planes_per_group, z1);
  // Rows up to y1 are in the buffer (y1 is the box's lower neighbour row).
  const bool in_buffer = x < pitch && y <= y1;
  const bool active = x >= x0 && x < x1 && y < y1;
  size_t c = (size_t)plane_begin * plane + (size_t)y * pitch + x;
  // Each work-item keeps two planes ahead of u and one of f in flight (loaded an iteration before
  // they are used), so that several loads cover the memory latency: one at a time cannot reach
  // full bandwidth.
  REAL behind = in_buffer ? u[c - plane] : (REAL)0;
  REAL here = in_buffer ? u[c] : (REAL)0;
  REAL front = in_buffer ? u[c + plane] : (REAL)0;
  REAL source = active && plane_begin < plane_end ? f[c] : (REAL)0;
  REAL update = (REAL)0;
  uint side = 0;
  for (uint z = plane_begin; z < plane_end; ++z) {  // the same count for the whole group
    // Planes up to z1 are in the buffer (z1 is the box's back neighbour plane).
    const REAL ahead = in_buffer && z + 2 <= z1 ? u[c + 2 * (size_t)plane] : (REAL)0;
    const REAL next_source = active && z + 1 < plane_end ? f[c + plane] : (REAL)0;
    tile[side][ly + 1][lx + 1] = here;
    if (lx == 0) tile[side][ly + 1][0] = in_buffer && x > 0 ? u[c - 1] : (REAL)0;
    if (lx == TILE_X - 1) tile[side][ly + 1][TILE_X + 1] = x + 1 < pitch && y <= y1 ? u[c + 1] : (REAL)0;
    if (ly == 0) tile[side][0][lx + 1] = x < pitch ? u[c - pitch] : (REAL)0;
    if (ly == TILE_Y - 1) tile[side][TILE_Y + 1][lx + 1] = x < pitch && y + 1 <= y1 ? u[c + pitch] : (REAL)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
      const REAL sum = ((((tile[side][ly + 1][lx] + tile[side][ly + 1][lx + 2]) + tile[side][ly][lx + 1]) +
                         tile[side][ly + 2][lx + 1]) + behind) + front;
      const REAL next = sixth * (sum + h2 * source);
      v[c] = next;
      update = larger(update, fabs(next - here));
    }
    behind = here;
    here = front;
    front = ahead;
    source = next_source;
    c += plane;
    side ^= 1;
  }
  if (record == 0) return;  // uniform: a kernel argument
  const uint lid = ly * TILE_X + lx;
  most[lid] = update;
  for (uint width = TILE_X * TILE_Y / 2; width > 0; width /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < width) most[lid] = larger(most[lid], most[lid + width]);
  }
  if (lid == 0) {
    const size_t group = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    partial[group] = most[0];
  }
}

// One work-group of REDUCE_GROUP folds values[0 .. count) into result[slot] with larger().
__kernel __attribute__((reqd_work_group_size(REDUCE_GROUP, 1, 1)))
void max_reduce(__global const REAL* restrict values, const uint count, __global REAL* restrict result, const uint slot) {
  __local REAL most[REDUCE_GROUP];
  const uint lid = (uint)get_local_id(0);
  REAL local_most = (REAL)0;
  for (uint i = lid; i < count; i += REDUCE_GROUP) local_most = larger(local_most, values[i]);
  most[lid] = local_most;
  for (uint width = REDUCE_GROUP / 2; width > 0; width /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < width) most[lid] = larger(most[lid], most[lid + width]);
  }
  if (lid == 0) result[slot] = most[0];
}
