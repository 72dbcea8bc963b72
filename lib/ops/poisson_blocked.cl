// Temporal blocking on chip for the Jacobi sweeps of the seven-point Poisson scheme (issue 16):
// up to TIME_STEPS sweeps of a 3D box a launch, laid out and streamed like heat3d_blocked
// (heat_blocked.cl): a tile of TILE_X x (TILE_Y ROWS_PER_ITEM) nodes walks `planes_per_group`
// planes along z, each sweep's three planes in registers, the plane being swept in local memory;
// the box [x0, x1) x [y0, y1) x [z0, z1) at the last sweep grows by the sweeps still to come,
// within the interior [xlo, xhi) x [ylo, yhi) x [zlo, zhi). Every computed node does the update of
// jacobi3d_box (poisson_stencil.cl), sixth * (sum + h2 f) with the neighbours added x-1, x+1, y-1,
// y+1, z-1, z+1, so the result has the bits of single sweeps. With `record` set, each work-group
// writes the largest |U' - U| of the last sweep over the nodes it writes to partial[its linear
// group number] (NaN wins), as jacobi3d_box does; max_reduce folds them.
//
// Build options: -DREAL (the prologue), -DTIME_STEPS, -DTILE_X, -DTILE_Y, -DROWS_PER_ITEM.

#pragma OPENCL FP_CONTRACT OFF

#define TILE_H (TILE_Y * ROWS_PER_ITEM)

inline REAL larger(const REAL a, const REAL b) { return isnan(a) || a > b ? a : b; }

__kernel __attribute__((reqd_work_group_size(TILE_X, TILE_Y, 1)))
void jacobi3d_blocked(__global const REAL* restrict u, __global REAL* restrict v, __global const REAL* restrict f,
                      __global REAL* restrict partial, const uint record, const uint pitch, const uint plane,
                      const uint planes, const int x0, const int x1, const int y0, const int y1, const int z0,
                      const int z1, const int xlo, const int xhi, const int ylo, const int yhi, const int zlo,
                      const int zhi, const uint steps, const uint planes_per_group, const REAL sixth, const REAL h2) {
  __local REAL tile[TILE_H][TILE_X];
  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
  const int x = x0 + (int)get_group_id(0) * (TILE_X - 2 * TIME_STEPS) - TIME_STEPS + lx;
  const int y_first = y0 + (int)get_group_id(1) * (TILE_H - 2 * TIME_STEPS) - TIME_STEPS + ly * ROWS_PER_ITEM;
  const int left = max(lx - 1, 0), right = min(lx + 1, TILE_X - 1);  // edge nodes: garbage, discarded
  const int s = (int)steps;
  const int pz0 = z0 + (int)get_group_id(2) * (int)planes_per_group;
  const int pz1 = min(pz0 + (int)planes_per_group, z1);
  const bool x_readable = x >= 0 && x < (int)pitch;
  REAL q[TIME_STEPS][3][ROWS_PER_ITEM];  // sweep t's planes p - 1, p, p + 1 for sweep t + 1's plane p
#pragma unroll
  for (int t = 0; t < TIME_STEPS; ++t)
#pragma unroll
    for (int j = 0; j < ROWS_PER_ITEM; ++j) q[t][0][j] = q[t][1][j] = q[t][2][j] = (REAL)0;
  REAL update = (REAL)0;
  for (int pi = pz0 - s - 1; pi <= pz1 + s; ++pi) {  // the same count for the whole group
#pragma unroll
    for (int j = 0; j < ROWS_PER_ITEM; ++j) {
      const int y = y_first + j;
      const bool readable = x_readable && y >= 0 && y < (int)(plane / pitch) && pi >= 0 && pi < (int)planes;
      q[0][0][j] = q[0][1][j];
      q[0][1][j] = q[0][2][j];
      q[0][2][j] = readable ? u[(size_t)pi * plane + (size_t)y * pitch + x] : (REAL)0;
    }
    // A fixed count, so that it unrolls, and barriers outside any branch (PoCL replicates the code
    // after a barrier in a branch); steps beyond `steps` only pass the barriers.
#pragma unroll
    for (int t = 1; t <= TIME_STEPS; ++t) {
      const int p = pi - t, reach = s - t;
      if (t <= s) {
#pragma unroll
        for (int j = 0; j < ROWS_PER_ITEM; ++j) tile[ly * ROWS_PER_ITEM + j][lx] = q[t - 1][1][j];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (t <= s) {
        const bool plane_computed = p >= max(z0 - reach, zlo) && p < min(z1 + reach, zhi);
        const bool column_computed = x >= max(x0 - reach, xlo) && x < min(x1 + reach, xhi);
#pragma unroll
        for (int j = 0; j < ROWS_PER_ITEM; ++j) {
          const int y = y_first + j, row = ly * ROWS_PER_ITEM + j;
          const int up = max(row - 1, 0), down = min(row + 1, TILE_H - 1);
          REAL value = q[t - 1][1][j];
          if (plane_computed && column_computed && y >= max(y0 - reach, ylo) && y < min(y1 + reach, yhi)) {
            const REAL sum = ((((tile[row][left] + tile[row][right]) + tile[up][lx]) + tile[down][lx]) + q[t - 1][0][j]) +
                             q[t - 1][2][j];
            value = sixth * (sum + h2 * f[(size_t)p * plane + (size_t)y * pitch + x]);
          }
          if (t < s) {
            q[t < TIME_STEPS ? t : 0][0][j] = q[t < TIME_STEPS ? t : 0][1][j];
            q[t < TIME_STEPS ? t : 0][1][j] = q[t < TIME_STEPS ? t : 0][2][j];
            q[t < TIME_STEPS ? t : 0][2][j] = value;
          } else if (p >= pz0 && p < pz1 && lx >= TIME_STEPS && lx < TILE_X - TIME_STEPS && x < x1 &&
                     row >= TIME_STEPS && row < TILE_H - TIME_STEPS && y < y1) {
            v[(size_t)p * plane + (size_t)y * pitch + x] = value;
            update = larger(update, fabs(value - q[t - 1][1][j]));
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  if (record == 0) return;  // uniform: a kernel argument
  __local REAL* most = &tile[0][0];  // TILE_H x TILE_X >= TILE_X x TILE_Y values
  const int lid = ly * TILE_X + lx;
  most[lid] = update;
  for (int width = TILE_X * TILE_Y / 2; width > 0; width /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < width) most[lid] = larger(most[lid], most[lid + width]);
  }
  if (lid == 0) {
    const size_t group = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    partial[group] = most[0];
  }
}
