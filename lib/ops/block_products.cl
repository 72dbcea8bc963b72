// Products of tall sets of interleaved vectors (rows x M and rows x K row-major arrays, as the
// solvers keep them) with each other and with small matrices: the Gram matrix G = A^T B (M x K),
// reduced in a fixed order (the same bits every run), and Z = beta Z + alpha W H (H: M x K).
// Host side: lib/ops/block_products.cpp.
//
// Build options: M, K, GROUP (work-group size), GROUPS (work-groups of the Gram matrix), TILE (rows
// staged in local memory per step), EPT (entries of G per work-item: ceil(M K / GROUP)).

// partial[g][e] = sum over the rows of work-group g, in row order, of A(r, e / K) B(r, e % K).
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void gram_partials(
    const uint rows, __global const REAL* restrict a, __global const REAL* restrict b, __global REAL* restrict partial) {
  __local REAL As[TILE * M];
  __local REAL Bs[TILE * K];
  const uint lid = get_local_id(0), g = get_group_id(0);
  const uint per = (rows + GROUPS - 1) / GROUPS;
  const uint first = min(g * per, rows), last = min(first + per, rows);
  REAL acc[EPT];
#pragma unroll
  for (uint s = 0; s < EPT; ++s) acc[s] = 0;
  for (uint base = first; base < last; base += TILE) {
    const uint n = min((uint)TILE, last - base);
    for (uint p = lid; p < TILE * M; p += GROUP) As[p] = p < n * M ? a[(size_t)base * M + p] : (REAL)0;
    for (uint p = lid; p < TILE * K; p += GROUP) Bs[p] = p < n * K ? b[(size_t)base * K + p] : (REAL)0;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint s = 0; s < EPT; ++s) {
      const uint e = lid + s * GROUP;
      if (e < M * K) {
        const uint i = e / K, j = e - i * K;
#pragma unroll 8
        for (uint r = 0; r < TILE; ++r) acc[s] += As[r * M + i] * Bs[r * K + j];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#pragma unroll
  for (uint s = 0; s < EPT; ++s) {
    const uint e = lid + s * GROUP;
    if (e < M * K) partial[(size_t)g * M * K + e] = acc[s];
  }
}

// g[e] = the work-groups' partial sums of entry e, added in group order.
__kernel void gram_finish(__global const REAL* restrict partial, __global REAL* restrict g) {
  const uint e = get_global_id(0);
  if (e >= M * K) return;
  REAL s = 0;
  for (uint p = 0; p < GROUPS; ++p) s += partial[(size_t)p * M * K + e];
  g[e] = s;
}

// Z(r, j) = beta Z(r, j) + alpha sum_i W(r, i) H(i, j), one work-item per value of Z; beta = 0
// writes Z without reading it.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void combine_rows(
    const uint rows, const REAL alpha, const REAL beta, __global const REAL* restrict w,
    __global const REAL* restrict h, __global REAL* z) {
  __local REAL Hs[M * K];
  for (uint p = get_local_id(0); p < M * K; p += GROUP) Hs[p] = h[p];
  barrier(CLK_LOCAL_MEM_FENCE);
  const size_t v = get_global_id(0);
  if (v >= (size_t)rows * K) return;
  const size_t r = v / K;
  const uint j = (uint)(v - r * K);
  REAL s = 0;
  for (uint i = 0; i < M; ++i) s += w[r * M + i] * Hs[i * K + j];
  z[v] = beta == (REAL)0 ? alpha * s : beta * z[v] + alpha * s;
}
