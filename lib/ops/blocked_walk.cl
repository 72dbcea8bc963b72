// A part of the temporal-blocking kernels (heat_blocked.cl and poisson_blocked.cl include it):
// how far ahead the walks load, and the 3D walk that the heat step (heat3d_blocked) and the
// Jacobi sweep (jacobi3d_blocked) share. Built with their options (heat_blocked.cl).

#include "base/group_reduce.cl"

// How many iterations ahead the 2D and 3D walks load their input (registers for latency).
#ifndef PREFETCH
#define PREFETCH 1
#endif

#if BLOCKED_DIMS == 3
// 3D, seven-point: work-groups of TILE_X x TILE_Y work-items, each holding ROWS_PER_ITEM nodes
// of a column in y, so that a group's tile is TILE_X x (TILE_Y ROWS_PER_ITEM) nodes of a plane;
// it owns the tile less TIME_STEPS on each side and walks `planes_per_group` planes along z.
// Step t's plane trails step (t - 1)'s by one; each step keeps the planes behind, at and in front
// of the one the next step computes in registers (fully unrolled over the steps), and only the
// plane being stencilled goes through local memory, for the neighbours in x and the rows of the
// work-items above and below (two copies of one plane, alternating step after step, so one
// barrier a step is enough), so the depth is bounded by registers, not by local memory.
//
// One walk serves the heat step (heat3d_blocked) and the Jacobi sweep of the seven-point Poisson
// scheme (jacobi3d_blocked), whose update is sixth * (sum + h2 f) with the neighbours in the same
// order as jacobi3d_box (poisson_stencil.cl); with `record` set, each Jacobi work-group also
// writes the largest |U' - U| of its last sweep to partial[its linear group number] (NaN wins),
// as jacobi3d_box does, for max_reduce to fold.
#define TILE_H (TILE_Y * ROWS_PER_ITEM)

// Node (x, y) of plane p, or 0 outside the buffer.
inline REAL input_node(__global const REAL* restrict u, const bool x_readable, const int p, const int y, const int x,
                       const uint pitch, const uint plane, const uint planes) {
  const bool readable = x_readable && y >= 0 && y < (int)(plane / pitch) && p >= 0 && p < (int)planes;
  return readable ? u[(size_t)p * plane + (size_t)y * pitch + x] : (REAL)0;
}

// The box at the last step, the interior, and how the launch covers them (kernel arguments).
typedef struct {
  int x0, x1, y0, y1, z0, z1, xlo, xhi, ylo, yhi, zlo, zhi;
} Region;

// The walk of one work-group; `jacobi` is a constant of each kernel (heat: c0 = a, c1 = b; Jacobi:
// c0 = sixth, c1 = h2, f the right-hand side). Returns the largest update of the nodes it wrote.
inline REAL walk3d(__global const REAL* restrict u, __global REAL* restrict v, __global const REAL* restrict f,
                   __local REAL (*tiles)[TILE_H][TILE_X], const bool jacobi, const uint pitch, const uint plane,
                   const uint planes, const Region r, const uint steps, const uint planes_per_group, const REAL c0,
                   const REAL c1) {
  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
  const int x = r.x0 + (int)get_group_id(0) * (TILE_X - 2 * TIME_STEPS) - TIME_STEPS + lx;
  const int y_first = r.y0 + (int)get_group_id(1) * (TILE_H - 2 * TIME_STEPS) - TIME_STEPS + ly * ROWS_PER_ITEM;
  const int left = max(lx - 1, 0), right = min(lx + 1, TILE_X - 1);  // edge nodes: garbage, discarded
  const int s = (int)steps;
  const int pz0 = r.z0 + (int)get_group_id(2) * (int)planes_per_group;
  const int pz1 = min(pz0 + (int)planes_per_group, r.z1);
  const bool x_readable = x >= 0 && x < (int)pitch;
  REAL update = (REAL)0;
  REAL q[TIME_STEPS][3][ROWS_PER_ITEM];  // step t's planes p - 1, p, p + 1 for step t + 1's plane p
  // Jacobi: f of plane pi - k in sources[k] at iteration pi, so that each launch reads f once and
  // step t finds its plane pi - t's in registers; plane pi's is loaded an iteration before use.
  REAL sources[TIME_STEPS + 1][ROWS_PER_ITEM];
  int copy = 0;                          // the copy of the plane the next step writes
#pragma unroll
  for (int t = 0; t < TIME_STEPS; ++t)
#pragma unroll
    for (int j = 0; j < ROWS_PER_ITEM; ++j) q[t][0][j] = q[t][1][j] = q[t][2][j] = (REAL)0;
#pragma unroll
  for (int k = 0; k <= TIME_STEPS; ++k)
#pragma unroll
    for (int j = 0; j < ROWS_PER_ITEM; ++j) sources[k][j] = (REAL)0;
  // The planes of the next PREFETCH iterations are loaded ahead, so that their loads are in flight
  // while this iteration's steps run.
  REAL ahead[PREFETCH + 1][ROWS_PER_ITEM];
#pragma unroll
  for (int k = 0; k < PREFETCH; ++k)
#pragma unroll
    for (int j = 0; j < ROWS_PER_ITEM; ++j) ahead[k][j] = input_node(u, x_readable, pz0 - s - 1 + k, y_first + j, x, pitch, plane, planes);
  for (int pi = pz0 - s - 1; pi <= pz1 + s; ++pi) {  // the same count for the whole group
#pragma unroll
    for (int j = 0; j < ROWS_PER_ITEM; ++j) {
      ahead[PREFETCH][j] = input_node(u, x_readable, pi + PREFETCH, y_first + j, x, pitch, plane, planes);
      q[0][0][j] = q[0][1][j];
      q[0][1][j] = q[0][2][j];
      q[0][2][j] = ahead[0][j];
#pragma unroll
      for (int k = 0; k < PREFETCH; ++k) ahead[k][j] = ahead[k + 1][j];
      if (jacobi) {
#pragma unroll
        for (int k = TIME_STEPS; k > 0; --k) sources[k][j] = sources[k - 1][j];
        sources[0][j] = input_node(f, x_readable, pi, y_first + j, x, pitch, plane, planes);
      }
    }
    // A fixed count, so that it unrolls, and barriers outside any branch (PoCL replicates the code
    // after a barrier in a branch); steps beyond `steps` only pass the barriers.
#pragma unroll
    for (int t = 1; t <= TIME_STEPS; ++t) {
      const int p = pi - t, reach = s - t;
      __local REAL (*tile)[TILE_X] = tiles[copy];
      if (t <= s) {
#pragma unroll
        for (int j = 0; j < ROWS_PER_ITEM; ++j) tile[ly * ROWS_PER_ITEM + j][lx] = q[t - 1][1][j];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (t <= s) {
        const bool plane_computed = p >= max(r.z0 - reach, r.zlo) && p < min(r.z1 + reach, r.zhi);
        const bool column_computed = x >= max(r.x0 - reach, r.xlo) && x < min(r.x1 + reach, r.xhi);
#pragma unroll
        for (int j = 0; j < ROWS_PER_ITEM; ++j) {
          const int y = y_first + j, row = ly * ROWS_PER_ITEM + j;
          const int up = max(row - 1, 0), down = min(row + 1, TILE_H - 1);
          const REAL here = q[t - 1][1][j];
          REAL value = here;
          if (plane_computed && column_computed && y >= max(r.y0 - reach, r.ylo) && y < min(r.y1 + reach, r.yhi)) {
            // The rows above and below are this work-item's own, but at its first and last row.
            const REAL above = j > 0 ? q[t - 1][1][j > 0 ? j - 1 : 0] : tile[up][lx];
            const REAL below = j < ROWS_PER_ITEM - 1 ? q[t - 1][1][j < ROWS_PER_ITEM - 1 ? j + 1 : j] : tile[down][lx];
            const REAL sum = ((((tile[row][left] + tile[row][right]) + above) + below) + q[t - 1][0][j]) + q[t - 1][2][j];
            value = jacobi ? c0 * (sum + c1 * sources[t][j]) : c0 * sum + c1 * here;
          }
          if (t < s) {
            q[t < TIME_STEPS ? t : 0][0][j] = q[t < TIME_STEPS ? t : 0][1][j];
            q[t < TIME_STEPS ? t : 0][1][j] = q[t < TIME_STEPS ? t : 0][2][j];
            q[t < TIME_STEPS ? t : 0][2][j] = value;
          } else if (p >= pz0 && p < pz1 && lx >= TIME_STEPS && lx < TILE_X - TIME_STEPS && x < r.x1 &&
                     row >= TIME_STEPS && row < TILE_H - TIME_STEPS && y < r.y1) {
            v[(size_t)p * plane + (size_t)y * pitch + x] = value;
            if (jacobi) update = larger(update, fabs(value - here));
          }
        }
      }
      copy ^= 1;
    }
  }
  return update;
}

#define REGION_ARGUMENTS                                                                                      \
  const int x0, const int x1, const int y0, const int y1, const int z0, const int z1, const int xlo,        \
      const int xhi, const int ylo, const int yhi, const int zlo, const int zhi
#define REGION {x0, x1, y0, y1, z0, z1, xlo, xhi, ylo, yhi, zlo, zhi}
#endif
