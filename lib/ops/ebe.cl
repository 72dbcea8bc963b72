// Element-by-element products (method notes, section 4): Y = K X and K+ = X^T K X with
// K = sum_i P_i^T L_i P_i, L_i given as packed upper triangles (row by row) and the index vector
// V_i of each element (negative: a constrained DOF, read as zero and never written).
//
// Build options: L (local DOFs per element), K (vectors; X and Y are dofs x K interleaved), TR
// (rows of a product tile, dividing L), WG (work-group size: at least K and the lanes of
// product_place), TPT (projection tiles per work-item), CHUNK (elements per work-group),
// REDUCE_GROUP (the reduction's group size), ATOMICS (1: scatter with atomic adds); COLUMNS (1: the
// column-layout projection, with its group CWG >= K rounded up to 4 and its CTPT tiles per item);
// TENSOR (1: the tensor-core projection, NVIDIA only, double, L and K at most 32; see there),
// MMA16 (1: with its m16n8k8 instruction, compute capability 9.0 or later) and FACTORED (1: the
// tensor projection reads the elements' Cholesky factors, ebe_factor.cl).
//
// A work-group takes CHUNK consecutive elements, one at a time. In the tile layout (ebe_multiply,
// ebe_project) it stages the element's matrix (unpacked, in local memory) and X_i (its L rows of X,
// K values each, rows padded to KP) and then
//   product     Y_i = L_i X_i in register tiles of TR rows x 4 vectors, one per work-item: per
//               column c of L_i, one 4-value load of X_i's row c and TR loads of L_i's column c
//               (L_i is symmetric: its row c) feed 4 TR multiply-adds;
//   projection  the upper triangle of X_i^T Y_i in tiles of 4 x 4, one per work-item (TPT each
//               when there are more tiles than work-items): per row r, two 4-value loads feed 16
//               multiply-adds; each tile's sums stay in registers over the whole chunk.
// In the column layout (ebe_project_columns) work-item j holds vector j of X_i in registers,
// gathered straight from x, and computes vector j of Y_i from the packed matrix in local memory,
// whose every load all work-items share (a broadcast, served once for the whole warp); the matrix
// is staged packed (l(l+1)/2 values, not l^2), and only X_i and Y_i go through local memory, to the
// same projection tiles. Which layout is faster depends on the device
// (bench/results/2026-11-28-design-measurements.md): choose_ebe_layout() measures.
// Both give the same bits: each sum runs over the same terms in the same order.
// NVIDIA's local memory returns one 32-bit word per work-item a cycle, twice that when neighbouring
// work-items (t and t^1, or t and t^2) read the same address: the tiles are laid out so that most
// loads are shared that way (product_place, projection_place; neutral elsewhere). The
// projection's staging waits for memory once an element (stage_element_batched, load_packed).
//
// The kernels come from parts of this folder: ebe_common.cl (X_i's rows and the projection tiles
// that the tile and column layouts share), ebe_tiles.cl, ebe_columns.cl, ebe_tensor.cl; the
// reduction of the projections' partial sums is here.

#include "base/group_reduce.cl"
#include "ebe_common.cl"
#include "ebe_tiles.cl"

#ifdef COLUMNS
#include "ebe_columns.cl"
#endif

#ifdef TENSOR
#include "ebe_tensor.cl"
#endif

// result[entry] = sum over the chunks of partial[entry * chunks + c], one work-group per entry, in
// a fixed order (each work-item's stride in order, then a fixed tree): the same bits every run.
__kernel __attribute__((reqd_work_group_size(REDUCE_GROUP, 1, 1))) void ebe_reduce(
    __global const REAL* restrict partial, const uint chunks, __global REAL* restrict result) {
  __local REAL sums[REDUCE_GROUP];
  const uint lid = get_local_id(0), entry = get_group_id(0);
  REAL s = 0;
  for (uint c = lid; c < chunks; c += REDUCE_GROUP) s += partial[(size_t)entry * chunks + c];
  sums[lid] = s;
#define SUMS(i) sums[i]
  GROUP_REDUCE(SUMS, lid, REDUCE_GROUP, REDUCE_SUM);
#undef SUMS
  if (lid == 0) result[entry] = sums[0];
}
