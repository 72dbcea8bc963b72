// Temporal blocking on chip (issue 16): a work-group advances a tile of a grid `steps` steps
// (at most TIME_STEPS) in one launch, so that the grid crosses device memory once per `steps`
// steps instead of once per step. Host side: lib/ops/heat_blocked.cpp.
//
// The box [x0, x1) x [y0, y1) is what the launch computes at its last step; at step t of `steps`
// it computes the box grown by steps - t nodes on every side (the pyramid of a pass, whose input
// is valid that far out), within the grid's interior [xlo, xhi) x [ylo, yhi) in buffer
// coordinates: nodes outside the interior are the Dirichlet boundary and keep their values (in
// core the box is the interior and does not grow). Every computed node does the update of heat2d_box, a * (((left + right) + above)
// + below) + b * here, with the same rounding (no contraction), so the result has the bits of
// `steps` single steps.
//
// Each work-group of ROW_GROUP work-items owns ROW_GROUP - 2 TIME_STEPS consecutive columns and
// reads TIME_STEPS more on each side (the on-chip pyramid: garbage from the edges moves one
// column inwards a step). It walks `rows_per_group` rows down, ROWS_AT_ONCE input rows an
// iteration; step t's rows trail step (t - 1)'s by one. Each work-item keeps its column in
// registers (a queue of ROWS_AT_ONCE + 2 rows a step: the rows above, at and below those the next
// step computes), so only the left and right neighbours go through local memory: a step writes
// its ROWS_AT_ONCE rows there, passes one barrier and reads them back shifted. The local rows
// alternate between two copies step after step, so one barrier a step is enough. Every loop over
// steps has the fixed count TIME_STEPS (it unrolls, and the barriers stay outside any branch);
// steps beyond `steps` only pass the barriers.
//
// In 3D the same walk (blocked_walk.cl) also runs the Jacobi sweeps of the Poisson scheme
// (jacobi3d_blocked, poisson_blocked.cl).
//
// The 2D and 3D walks load their input PREFETCH iterations ahead (default 1), so that the loads
// are in flight while the steps run (measured: bench/results/2026-11-26-h200-heat-prefetch.md).
//
// Build options: -DREAL (the prologue), -DBLOCKED_DIMS (1, 2 or 3: which kernels the program holds),
// -DTIME_STEPS; -DROW_GROUP (1D, 2D); -DROWS_AT_ONCE (2D); -DTILE_X, -DTILE_Y, -DROWS_PER_ITEM (3D);
// -DPREFETCH (2D, 3D).

#pragma OPENCL FP_CONTRACT OFF

#include "blocked_walk.cl"

#if BLOCKED_DIMS == 2
#define QUEUE (ROWS_AT_ONCE + 2)
// Row y's node of column x, or 0 outside the buffer.
inline REAL input_row(__global const REAL* restrict u, const bool readable, const int y, const uint rows,
                      const uint pitch, const int x) {
  return readable && y >= 0 && y < (int)rows ? u[(size_t)y * pitch + x] : (REAL)0;
}

__kernel __attribute__((reqd_work_group_size(ROW_GROUP, 1, 1)))
void heat2d_blocked(__global const REAL* restrict u, __global REAL* restrict v, const uint pitch, const uint rows,
                    const int x0, const int x1, const int y0, const int y1, const int xlo, const int xhi,
                    const int ylo, const int yhi, const uint steps, const uint rows_per_group, const REAL a,
                    const REAL b) {
  __local REAL line[2][ROWS_AT_ONCE][ROW_GROUP];
  const int lid = (int)get_local_id(0);
  const int x = x0 + (int)get_group_id(0) * (ROW_GROUP - 2 * TIME_STEPS) - TIME_STEPS + lid;
  const int left = max(lid - 1, 0), right = min(lid + 1, ROW_GROUP - 1);  // edge columns: garbage, discarded
  const int s = (int)steps;
  const int ry0 = y0 + (int)get_group_id(1) * (int)rows_per_group;
  const int ry1 = min(ry0 + (int)rows_per_group, y1);
  const bool readable = x >= 0 && x < (int)pitch;
  // q[t][i] holds step t's value of row first - t - 2 + i, where `first` is the iteration's first
  // input row: q[t][0] and q[t][1] carry over from the previous iteration, the rest is computed now.
  REAL q[TIME_STEPS][QUEUE];
#pragma unroll
  for (int t = 0; t < TIME_STEPS; ++t)
#pragma unroll
    for (int i = 0; i < QUEUE; ++i) q[t][i] = (REAL)0;
  int copy = 0;  // the local copy the next step writes
  // The input rows of the next PREFETCH iterations are loaded ahead, so that their loads are in
  // flight while this iteration's steps run.
  REAL ahead[PREFETCH + 1][ROWS_AT_ONCE];
#pragma unroll
  for (int k = 0; k < PREFETCH; ++k)
#pragma unroll
    for (int i = 0; i < ROWS_AT_ONCE; ++i) ahead[k][i] = input_row(u, readable, ry0 - s + k * ROWS_AT_ONCE + i, rows, pitch, x);
  // Step t is valid from row ry0 - s + t on, given the input from ry0 - s; step s's rows
  // first - s .. first - s + ROWS_AT_ONCE - 1 must reach ry1 - 1. The same trip count for the
  // whole group.
  for (int first = ry0 - s; first - s < ry1; first += ROWS_AT_ONCE) {
#pragma unroll
    for (int i = 0; i < ROWS_AT_ONCE; ++i) ahead[PREFETCH][i] = input_row(u, readable, first + PREFETCH * ROWS_AT_ONCE + i, rows, pitch, x);
#pragma unroll
    for (int t = 0; t < TIME_STEPS; ++t) {
      q[t][0] = q[t][ROWS_AT_ONCE];
      q[t][1] = q[t][ROWS_AT_ONCE + 1];
    }
#pragma unroll
    for (int i = 0; i < ROWS_AT_ONCE; ++i) {
      q[0][i + 2] = ahead[0][i];
#pragma unroll
      for (int k = 0; k < PREFETCH; ++k) ahead[k][i] = ahead[k + 1][i];
    }
#pragma unroll
    for (int t = 1; t <= TIME_STEPS; ++t) {
      // Step t computes rows first - t + i from step t - 1's rows first - t + i - 1 .. + 1, which
      // are q[t - 1][i .. i + 2].
#pragma unroll
      for (int i = 0; i < ROWS_AT_ONCE; ++i) line[copy][i][lid] = q[t - 1][i + 1];
      barrier(CLK_LOCAL_MEM_FENCE);
      if (t <= s) {
        const int reach = s - t;
        const bool column_computed = x >= max(x0 - reach, xlo) && x < min(x1 + reach, xhi);
#pragma unroll
        for (int i = 0; i < ROWS_AT_ONCE; ++i) {
          const int r = first - t + i;
          const REAL here = q[t - 1][i + 1];
          REAL value = here;
          if (column_computed && r >= max(y0 - reach, ylo) && r < min(y1 + reach, yhi))
            value = a * (((line[copy][i][left] + line[copy][i][right]) + q[t - 1][i]) + q[t - 1][i + 2]) + b * here;
          if (t < s) {
            q[t < TIME_STEPS ? t : 0][i + 2] = value;
          } else if (r >= ry0 && r < ry1 && lid >= TIME_STEPS && lid < ROW_GROUP - TIME_STEPS && x < x1) {
            v[(size_t)r * pitch + x] = value;
          }
        }
      }
      copy ^= 1;
    }
  }
}
#undef QUEUE
#endif

#if BLOCKED_DIMS == 1
// 1D: a work-group holds ROW_GROUP consecutive nodes in local memory (two copies, stepped in
// turn), owns the ROW_GROUP - 2 TIME_STEPS in the middle, and advances them `steps` steps, the
// update of heat1d_box; the box [x0, x1) and interior [xlo, xhi) as in 2D.
__kernel __attribute__((reqd_work_group_size(ROW_GROUP, 1, 1)))
void heat1d_blocked(__global const REAL* restrict u, __global REAL* restrict v, const uint length, const int x0,
                    const int x1, const int xlo, const int xhi, const uint steps, const REAL a, const REAL b) {
  __local REAL line[2][ROW_GROUP];
  const int lid = (int)get_local_id(0);
  const int out_begin = x0 + (int)get_group_id(0) * (ROW_GROUP - 2 * TIME_STEPS);
  const int x = out_begin - TIME_STEPS + lid;
  const int left = max(lid - 1, 0), right = min(lid + 1, ROW_GROUP - 1);  // edge nodes: garbage, discarded
  const int s = (int)steps;
  line[0][lid] = x >= 0 && x < (int)length ? u[x] : (REAL)0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = 1; t <= s; ++t) {  // uniform: every work-item runs the same steps
    const int reach = s - t;
    __local const REAL* from = line[(t - 1) & 1];
    REAL value = from[lid];
    if (x >= max(x0 - reach, xlo) && x < min(x1 + reach, xhi)) value = a * (from[left] + from[right]) + b * from[lid];
    if (t < s) {
      line[t & 1][lid] = value;
    } else if (lid >= TIME_STEPS && lid < ROW_GROUP - TIME_STEPS && x < x1) {
      v[x] = value;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
#endif

#if BLOCKED_DIMS == 3
__kernel __attribute__((reqd_work_group_size(TILE_X, TILE_Y, 1)))
void heat3d_blocked(__global const REAL* restrict u, __global REAL* restrict v, const uint pitch, const uint plane,
                    const uint planes, REGION_ARGUMENTS, const uint steps, const uint planes_per_group, const REAL a,
                    const REAL b) {
  __local REAL tiles[2][TILE_H][TILE_X];
  const Region r = REGION;
  walk3d(u, v, u, tiles, false, pitch, plane, planes, r, steps, planes_per_group, a, b);
}
#endif
