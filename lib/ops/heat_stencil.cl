// Explicit heat steps over a box of a grid in device memory: the kernels of the in-device solver
// and of the pyramid passes (method notes, section 1), and the naive step they are measured
// against. Host side: lib/ops/heat_stencil.cpp.
//
// Every kernel computes the nodes x0 <= x < x1 (y0 <= y < y1, z0 <= z < z1) of a buffer with rows
// `pitch` values apart (planes `plane` values apart) from `u` into `v`; the box lies inside the
// buffer by one node on every side, so every neighbour is there. Work-groups are aligned to
// absolute buffer columns: the first starts at `first_column`, a multiple of the group width at
// or below x0, so that while a pyramid's box shrinks the first group computes fewer columns and
// every group reads aligned addresses (rows are padded to the device's alignment).
//
// The update is the one of include/ziggurat/ops/heat_scheme.hpp, with the neighbours added in this order:
// x-1, x+1, y-1, y+1, z-1, z+1. No contraction into fused multiply-add, so that every kernel and
// the CPU reference round exactly alike.
//
// Build options: -DREAL (the prologue), -DROW_GROUP (2D work-group width), -DFLAT_KERNELS (1 on CPU
// devices, the only ones that run them: GPUs compile two kernels less), -DTILE_X, -DTILE_Y (3D
// work-group shape), -DBOX_AHEAD (heat3d_box: planes loaded ahead; default 4).

#pragma OPENCL FP_CONTRACT OFF

// 1D, three-point: one work-item per node.
__kernel void heat1d_box(__global const REAL* restrict u, __global REAL* restrict v, const uint first_column,
                         const uint x0, const uint x1, const REAL a, const REAL b) {
  const uint x = first_column + (uint)get_global_id(0);
  if (x < x0 || x >= x1) return;
  v[x] = a * (u[x - 1] + u[x + 1]) + b * u[x];
}

// 2D, five-point, work-groups of ROW_GROUP x 1. Each work-item owns a column and walks down
// `rows_per_group` rows of it, keeping the rows above, at and below in registers; the row's left
// and right neighbours come through local memory, where the edge work-items also put the values
// just outside their group. The local row is double-buffered, so one barrier per row suffices:
// a work-item cannot write a buffer again before everyone has passed the next row's barrier.
__kernel __attribute__((reqd_work_group_size(ROW_GROUP, 1, 1)))
void heat2d_box(__global const REAL* restrict u, __global REAL* restrict v, const uint pitch,
                const uint first_column, const uint x0, const uint x1, const uint y0, const uint y1,
                const uint rows_per_group, const REAL a, const REAL b) {
  __local REAL line[2][ROW_GROUP + 2];
  const uint lid = (uint)get_local_id(0);
  const uint x = first_column + (uint)get_global_id(0);
  const uint row_begin = y0 + (uint)get_group_id(1) * rows_per_group;
  const uint row_end = min(row_begin + rows_per_group, y1);
  const bool in_buffer = x < pitch;
  const bool active = x >= x0 && x < x1;
  size_t c = (size_t)row_begin * pitch + x;
  // Rows up to row_end are read (row_end is the lower neighbour of the last row computed). The
  // three rows below the current one are loaded ahead, so that each work-item keeps several loads
  // in flight: one at a time cannot cover the memory latency at full bandwidth.
  REAL above = in_buffer ? u[c - pitch] : (REAL)0;
  REAL here = in_buffer ? u[c] : (REAL)0;
  REAL below = in_buffer ? u[c + pitch] : (REAL)0;
  REAL ahead1 = in_buffer && row_begin + 2 <= row_end ? u[c + 2 * (size_t)pitch] : (REAL)0;
  REAL ahead2 = in_buffer && row_begin + 3 <= row_end ? u[c + 3 * (size_t)pitch] : (REAL)0;
  uint side = 0;
  for (uint y = row_begin; y < row_end; ++y) {  // the same count for the whole group
    const REAL ahead3 = in_buffer && y + 4 <= row_end ? u[c + 4 * (size_t)pitch] : (REAL)0;
    __local REAL* row = line[side];
    row[lid + 1] = here;
    if (lid == 0) row[0] = in_buffer && x > 0 ? u[c - 1] : (REAL)0;
    if (lid == ROW_GROUP - 1) row[ROW_GROUP + 1] = x + 1 < pitch ? u[c + 1] : (REAL)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) v[c] = a * (((row[lid] + row[lid + 2]) + above) + below) + b * here;
    above = here;
    here = below;
    below = ahead1;
    ahead1 = ahead2;
    ahead2 = ahead3;
    c += pitch;
    side ^= 1;
  }
}

#if FLAT_KERNELS
// 2D and 3D on CPU devices, work-groups as wide as the box (ops/heat_stencil.hpp's flat_launch):
// one work-item a node, every neighbour read from global memory (the cache holds the rows), and no
// local memory or barrier.
// PoCL then runs a work-group as one loop over its work-items that it vectorises along x; the box
// kernels' barrier a row splits that loop and keeps registers in memory between rows (4 to 30
// times slower there).
__kernel void heat2d_flat(__global const REAL* restrict u, __global REAL* restrict v, const uint pitch,
                 const uint first_column, const uint x0, const uint x1, const uint y0, const uint y1,
                 const REAL a, const REAL b) {
  const uint x = first_column + (uint)get_global_id(0);
  const uint y = y0 + (uint)get_global_id(1);
  if (x < x0 || x >= x1 || y >= y1) return;
  const size_t c = (size_t)y * pitch + x;
  v[c] = a * (((u[c - 1] + u[c + 1]) + u[c - pitch]) + u[c + pitch]) + b * u[c];
}

__kernel void heat3d_flat(__global const REAL* restrict u, __global REAL* restrict v, const uint pitch, const uint plane,
                 const uint first_column, const uint x0, const uint x1, const uint y0, const uint y1,
                 const uint z0, const REAL a, const REAL b) {
  const uint x = first_column + (uint)get_global_id(0);
  const uint y = y0 + (uint)get_global_id(1);
  if (x < x0 || x >= x1 || y >= y1) return;
  const size_t c = (size_t)(z0 + (uint)get_global_id(2)) * plane + (size_t)y * pitch + x;
  const REAL sum = ((((u[c - 1] + u[c + 1]) + u[c - pitch]) + u[c + pitch]) + u[c - plane]) + u[c + plane];
  v[c] = a * sum + b * u[c];
}
#endif

// 3D, seven-point, work-groups of TILE_X x TILE_Y x 1. Each work-item owns an (x, y) column and
// walks `planes_per_group` planes along z with the planes behind, at and in front in registers;
// it reads its x and y neighbours straight from global memory, where the caches serve them (the
// group's neighbouring columns loaded the same lines a few planes earlier), with no local tile and
// no barrier a plane, as jacobi3d_box does (poisson_stencil.cl). Each work-item loads BOX_AHEAD
// planes beyond the one in front ahead of use, so that enough loads are in flight to cover the
// memory latency (bench/results/2026-11-28-h200-heat3d.md).
#ifndef BOX_AHEAD
#define BOX_AHEAD 4
#endif
__kernel __attribute__((reqd_work_group_size(TILE_X, TILE_Y, 1)))
void heat3d_box(__global const REAL* restrict u, __global REAL* restrict v, const uint pitch, const uint plane,
                const uint first_column, const uint x0, const uint x1, const uint y0, const uint y1,
                const uint z0, const uint z1, const uint planes_per_group, const REAL a, const REAL b) {
  const uint x = first_column + (uint)get_global_id(0);
  const uint y = y0 + (uint)get_global_id(1);
  if (x < x0 || x >= x1 || y >= y1) return;  // no barrier below
  const uint plane_begin = z0 + (uint)get_group_id(2) * planes_per_group;
  const uint plane_end = min(plane_begin + planes_per_group, z1);
  // q[k] holds plane z - 1 + k of the column at iteration z: behind, here, in front, then the planes
  // loaded ahead. Planes up to plane_end are read (plane_end is the lower neighbour of the last).
  size_t c = (size_t)plane_begin * plane + (size_t)y * pitch + x;
  REAL q[BOX_AHEAD + 3];
#pragma unroll
  for (uint k = 0; k < BOX_AHEAD + 2; ++k) q[k] = plane_begin + k <= plane_end + 1 ? u[c + k * (size_t)plane - plane] : (REAL)0;
  for (uint z = plane_begin; z < plane_end; ++z) {
    q[BOX_AHEAD + 2] = z + BOX_AHEAD + 1 <= plane_end ? u[c + (BOX_AHEAD + 1) * (size_t)plane] : (REAL)0;
    const REAL sum = ((((u[c - 1] + u[c + 1]) + u[c - pitch]) + u[c + pitch]) + q[0]) + q[2];
    v[c] = a * sum + b * q[1];
#pragma unroll
    for (uint k = 0; k < BOX_AHEAD + 2; ++k) q[k] = q[k + 1];
    c += plane;
  }
}

// The naive 2D step, the baseline of the aligned kernels: one work-item per interior node
// (x, y) = (global id 0 + 1, global id 1 + 1), every neighbour read from global memory. Boundary
// nodes are never written: both buffers hold them from the upload.
__kernel void heat2d_naive(__global const REAL* restrict u, __global REAL* restrict v, const uint width,
                           const uint height, const uint pitch, const REAL a, const REAL b) {
  const uint x = (uint)get_global_id(0) + 1;
  const uint y = (uint)get_global_id(1) + 1;
  if (x + 1 >= width || y + 1 >= height) return;
  const size_t c = (size_t)y * pitch + x;
  const REAL sum = ((u[c - 1] + u[c + 1]) + u[c - pitch]) + u[c + pitch];
  v[c] = a * sum + b * u[c];
}
