// A part of the element-by-element kernels (ebe.cl includes it under TENSOR): the tensor-core
// layout of the projection (ebe_project_tensor).

// The tensor layout (NVIDIA only: compute capability 8.0 or later, double): a warp takes a chunk
// (TENSOR_WARPS warps a work-group), an element's values stay in registers, and its multiply-adds
// run on the double-precision tensor cores (mma.sync, through inline PTX): no local memory, no
// barriers. Per element, for each step n of 8 element rows
//   product     Y_i^T's rows of step n = X_i^T L_i's column block n, in blocks of 16 vectors x 8
//               rows (L_i is symmetric), summed over all of X_i's rows;
//   projection  K+ += X_i^T Y_i over the rows of step n, in blocks of 16 x 8 vectors (two 8-vector
//               tiles of X_i against one of Y_i), summed over the chunk; K+ is symmetric, so the
//               blocks cover each pair of tiles once (projection_block).
// Both sum over the element's rows in steps of 8, step t taking rows step_row(2 t, q) and
// step_row(2 t + 1, q) from lane 4 g + q: in that order the product's result blocks are the
// projection's operands as they lie, so no value moves between lanes. Lane 4 g + q holds
// X_i[step_row(s, q)][8 v + g] (xf), L_i[step_row(s, q)][8 n + g] (lf), Y_i[8 n + 2 q + h][8 v + g]
// (yt) and its share of each projection block (as the write at the end says). Rows past L and
// vectors past K are zeros. Taking the steps one at a time keeps one step of Y_i in registers, not
// all of it (238 registers, not 255 and a spill), and frees each column block of L_i for the next
// element as soon as it is used. The bits differ from the other layouts' (the tensor cores add in
// their own order), and are the same every run and for every batch size. MMA16 (compute
// capability 9.0 or later): one m16n8k8 instruction a block step; otherwise four m8n8k4 (the same
// products, added in another order).
// FACTORED: the elements come as R, P L_i P^T = R^T R, with X_i's rows permuted alike
// (ebe_factor.cl), and K+ += Z_i^T Z_i for Z_i = R X_i. The product takes R's upper triangle of
// blocks only (6 of 9 for 24 DOFs: 27 instructions an element, not 33), column block t of R with
// X_i's step t, so that step t of X_i and R is free for the next element's once used; all of Z_i
// stays in registers until the projection, whose operands are Z_i's blocks where they lie (206
// registers; bench/results/2026-11-28-design-measurements.md).
#define NT ((L + 7) / 8)        // 8-row tiles of an element, and steps of 8 rows
#define VT ((K + 7) / 8)        // 8-vector tiles ...
#define VP ((VT + 1) / 2)       // ... in pairs
#define VT2 (2 * VP)            // ... padded to whole pairs

// Warps a work-group, each on a chunk of its own (no local memory, no barriers); more than 8 exceed
// the work-group the driver allows at this kernel's registers, fewer were no faster
// (bench/results/2026-11-28-design-measurements.md).
#define TENSOR_WARPS 4

inline uint step_row(const uint s, const uint q) { return 8 * (s >> 1) + 2 * q + (s & 1); }
inline uint lane_group(void) { return (get_local_id(0) >> 2) & 7; }  // g of lane 4 g + q
inline uint lane_quad(void) { return get_local_id(0) & 3; }          // q

// The mma helpers have no side effects, so their asm is not volatile: the compilers may move them.
#ifndef MMA16
// d = A B + c for the warp's 8 x 4 A and 4 x 8 B, lane 4 g + q holding a = A[g][q], b = B[q][g]
// and c, d = row g, columns 2 q and 2 q + 1.
inline double2 mma_8x8x4(const double a, const double b, const double2 c) {
  double d0, d1;
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};"
      : "=d"(d0), "=d"(d1)
      : "d"(a), "d"(b), "d"(c.x), "d"(c.y));
  return (double2)(d0, d1);
}
#endif

// d = A B + c for the warp's 16 x 8 A and 8 x 8 B, lane 4 g + q holding
// a = (A[g][q], A[g + 8][q], A[g][q + 4], A[g + 8][q + 4]), b = (B[q][g], B[q + 4][g]) and
// c, d = (C[g][2 q], C[g][2 q + 1], C[g + 8][2 q], C[g + 8][2 q + 1]).
inline double4 mma_16x8x8(const double4 a, const double2 b, const double4 c) {
#ifdef MMA16
  double d0, d1, d2, d3;
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=d"(d0), "=d"(d1), "=d"(d2), "=d"(d3)
      : "d"(a.x), "d"(a.y), "d"(a.z), "d"(a.w), "d"(b.x), "d"(b.y), "d"(c.x), "d"(c.y), "d"(c.z), "d"(c.w));
  return (double4)(d0, d1, d2, d3);
#else
  const double2 top = mma_8x8x4(a.z, b.y, mma_8x8x4(a.x, b.x, c.xy));
  const double2 bottom = mma_8x8x4(a.w, b.y, mma_8x8x4(a.y, b.x, c.zw));
  return (double4)(top, bottom);
#endif
}

// dof[s]: the DOF of row step_row(s, q) of element e (negative: constrained, or a row past L).
inline void tensor_dofs(const uint e, __global const int* restrict indices, int* dof) {
  const uint q = lane_quad();
#pragma unroll
  for (uint s = 0; s < 2 * NT; ++s) {
    const uint r = step_row(s, q);
    dof[s] = r < L ? indices[(size_t)e * L + r] : -1;
  }
}

// xf[s VT2 + v] = X[dof[s]][8 v + g] for the rows of step t, s = 2 t and 2 t + 1 (0 at constrained
// DOFs and past K).
inline void tensor_gather_step(const int* dof, __global const REAL* restrict x, REAL* xf, const uint t) {
  const uint g = lane_group();
#pragma unroll
  for (uint s = 2 * t; s < 2 * t + 2; ++s)
#pragma unroll
    for (uint v = 0; v < VT2; ++v) {
      const uint j = 8 * v + g;
      xf[s * VT2 + v] = dof[s] >= 0 && j < K ? x[(size_t)dof[s] * K + j] : (REAL)0;
    }
}

#if L % 8 == 0
// Element matrix m's stored block (a, b), a < b, in the tensor layout's storage order.
inline __global const REAL* upper_block(__global const REAL* m, const uint a, const uint b) {
  return m + 64 * (a * (2 * NT - a - 1) / 2 + b - a - 1);
}

// ... and its diagonal block n, a packed upper triangle: entry (r, c), r <= c, at r (15 - r) / 2 + c.
inline __global const REAL* diagonal_block(__global const REAL* m, const uint n) {
  return m + 32 * NT * (NT - 1) + 36 * n;
}
#endif

// lf[s NT + n] = L_i[step_row(s, q)][8 n + g] for column block n (0 past L). Elements of whole
// tiles come in the tensor layout's storage order (tensor_storage_order, lib/ops/ebe.cpp): a block
// above the diagonal is read whole, 16 bytes a lane; the one below, its transpose, from the same
// 512 bytes; a diagonal block from its packed triangle (faster than packed rows).
// Other elements come as packed rows.
inline void tensor_matrix_column(const uint e, __global const REAL* restrict matrices, REAL* lf, const uint n) {
  const uint g = lane_group(), q = lane_quad();
  __global const REAL* m = matrices + (size_t)e * PACKED;
#if L % 8 == 0
#pragma unroll
  for (uint t = 0; t < NT; ++t) {
    if (t < n) {
      const double2 v = *(__global const double2*)(upper_block(m, t, n) + 2 * (4 * g + q));
      lf[2 * t * NT + n] = v.x;
      lf[(2 * t + 1) * NT + n] = v.y;
    } else if (t > n) {
      lf[2 * t * NT + n] = upper_block(m, n, t)[16 * q + g];
      lf[(2 * t + 1) * NT + n] = upper_block(m, n, t)[16 * q + 8 + g];
    } else {
      __global const REAL* diagonal = diagonal_block(m, n);
#pragma unroll
      for (uint h = 0; h < 2; ++h) {
        const uint r = 2 * q + h, lo = min(r, g), hi = max(r, g);
        lf[(2 * t + h) * NT + n] = diagonal[lo * (15 - lo) / 2 + hi];
      }
    }
  }
#else
#pragma unroll
  for (uint s = 0; s < 2 * NT; ++s) {
    const uint r = step_row(s, q), c = 8 * n + g, lo = min(r, c), hi = max(r, c);
    lf[s * NT + n] = hi < L ? m[lo * (2 * L - 1 - lo) / 2 + hi] : (REAL)0;
  }
#endif
}

#ifdef FACTORED
// lf[2 t NT + n] and lf[(2 t + 1) NT + n] = R[8 n + g][step_row(2 t, q)] and [step_row(2 t + 1, q)]
// for n <= t: column block t of the factor R (ebe_factor.cl; zero below the diagonal). A block above
// the diagonal is stored by rows: one 16-byte load a lane.
inline void factor_column(const uint e, __global const REAL* restrict matrices, REAL* lf, const uint t) {
  const uint g = lane_group(), q = lane_quad();
  __global const REAL* m = matrices + (size_t)e * PACKED;
#pragma unroll
  for (uint n = 0; n < t; ++n) {
    const double2 v = *(__global const double2*)(upper_block(m, n, t) + 2 * (4 * g + q));
    lf[2 * t * NT + n] = v.x;
    lf[(2 * t + 1) * NT + n] = v.y;
  }
  __global const REAL* diagonal = diagonal_block(m, t);
#pragma unroll
  for (uint h = 0; h < 2; ++h) {
    const uint c = 2 * q + h;
    lf[(2 * t + h) * NT + t] = c >= g ? diagonal[g * (15 - g) / 2 + c] : 0;
  }
}
#endif

// Projection block i: Y_i's tile c against X_i's tiles r1 and r2 (VT: none), giving K+'s tiles
// (r1, c) and (r2, c), or their transposes. The blocks take each pair of tiles {r, c} once: ceil of
// half the VT (VT + 1) / 2 pairs, the fewest 16 x 8 blocks can (5, not the 6 that pairs of whole
// rows of tiles need, for 25 to 32 vectors).
#if VT == 1
#define PB 1
#define PROJECTION_BLOCKS {(uint3)(0, 0, VT)}
#elif VT == 2
#define PB 2
#define PROJECTION_BLOCKS {(uint3)(0, 0, 1), (uint3)(1, 1, VT)}
#elif VT == 3
#define PB 3
#define PROJECTION_BLOCKS {(uint3)(0, 0, 1), (uint3)(1, 1, 2), (uint3)(2, 2, 0)}
#else
#define PB 5
#define PROJECTION_BLOCKS {(uint3)(0, 0, 1), (uint3)(1, 1, 2), (uint3)(2, 2, 3), (uint3)(3, 3, 1), (uint3)(0, 2, 3)}
#endif
inline uint3 projection_block(const uint i) {
  const uint3 blocks[PB] = PROJECTION_BLOCKS;
  return blocks[i];
}

// The A operand of row step t for X_i^T's tiles r1 and r2 (VT: zeros).
inline double4 tile_operand(const REAL* xf, const uint t, const uint r1, const uint r2) {
  const uint s = 2 * t;
  return (double4)(xf[s * VT2 + r1], r2 < VT ? xf[s * VT2 + r2] : 0, xf[(s + 1) * VT2 + r1],
                   r2 < VT ? xf[(s + 1) * VT2 + r2] : 0);
}

#ifdef FACTORED
// The A operand of Z_i^T's tiles r1 and r2 (VT: zeros) from a step's product, as it lies (zt).
inline double4 result_operand(const double2* zt, const uint r1, const uint r2) {
  return (double4)(zt[r1].x, r2 < VT ? zt[r2].x : 0, zt[r1].y, r2 < VT ? zt[r2].y : 0);
}
#endif

// As ebe_project, in the tensor layout, chunk TENSOR_WARPS g + w by warp w of group g. Element
// e + 1's column block n of L_i is loaded once e's product has used it, its X_i once e's last
// product (all but the last step) and last projection step (the last step) have, and its DOF
// numbers one element earlier.
__kernel __attribute__((reqd_work_group_size(32 * TENSOR_WARPS, 1, 1))) void ebe_project_tensor(
    const uint first, const uint count, __global const REAL* restrict matrices, __global const int* restrict indices,
    __global const REAL* restrict x, __global REAL* restrict partial, const uint first_chunk, const uint chunks) {
  const uint own = get_group_id(0) * TENSOR_WARPS + get_local_id(0) / 32;  // the warp's chunk in this launch
  if (own * CHUNK >= count) return;  // past the last chunk
  const uint begin = first + own * CHUNK;
  const uint end = min(begin + CHUNK, first + count);
  double4 sum[PB];
#pragma unroll
  for (uint i = 0; i < PB; ++i) sum[i] = (double4)(0);
  int dof[2 * NT];
  REAL xf[2 * NT * VT2], lf[2 * NT * NT];
  tensor_dofs(begin, indices, dof);
#pragma unroll
  for (uint t = 0; t < NT; ++t) {
    tensor_gather_step(dof, x, xf, t);
#ifdef FACTORED
    factor_column(begin, matrices, lf, t);
#else
    tensor_matrix_column(begin, matrices, lf, t);
#endif
  }
  if (begin + 1 < end) tensor_dofs(begin + 1, indices, dof);
#ifdef FACTORED
  for (uint e = begin; e < end; ++e) {
    const bool more = e + 1 < end;
    double4 z[NT * VP];  // Z_i^T's rows of step n, vector pair p: z[n VP + p], as yt below
#pragma unroll
    for (uint i = 0; i < NT * VP; ++i) z[i] = (double4)(0);
#pragma unroll
    for (uint t = 0; t < NT; ++t) {
#pragma unroll
      for (uint n = 0; n <= t; ++n)
#pragma unroll
        for (uint p = 0; p < VP; ++p)
          z[n * VP + p] = mma_16x8x8(tile_operand(xf, t, 2 * p, 2 * p + 1),
                                     (double2)(lf[2 * t * NT + n], lf[(2 * t + 1) * NT + n]), z[n * VP + p]);
      if (more) {
        factor_column(e + 1, matrices, lf, t);
        tensor_gather_step(dof, x, xf, t);
      }
    }
#pragma unroll
    for (uint n = 0; n < NT; ++n) {
      double2 zt[VT2];  // zt[v]: rows step_row(2 n, q), step_row(2 n + 1, q) of Z_i, vector 8 v + g
#pragma unroll
      for (uint p = 0; p < VP; ++p) {
        zt[2 * p] = z[n * VP + p].xy;
        zt[2 * p + 1] = z[n * VP + p].zw;
      }
#pragma unroll
      for (uint i = 0; i < PB; ++i) {
        const uint3 b = projection_block(i);
        sum[i] = mma_16x8x8(result_operand(zt, b.y, b.z), zt[b.x], sum[i]);
      }
    }
    if (more && e + 2 < end) tensor_dofs(e + 2, indices, dof);
  }
#else
  for (uint e = begin; e < end; ++e) {
    const bool more = e + 1 < end;
#pragma unroll
    for (uint n = 0; n < NT; ++n) {
      double4 acc[VP];  // Y_i^T's rows of step n: vector pair p, as yt below
#pragma unroll
      for (uint p = 0; p < VP; ++p) acc[p] = (double4)(0);
#pragma unroll
      for (uint t = 0; t < NT; ++t)
#pragma unroll
        for (uint p = 0; p < VP; ++p)
          acc[p] = mma_16x8x8(tile_operand(xf, t, 2 * p, 2 * p + 1), (double2)(lf[2 * t * NT + n], lf[(2 * t + 1) * NT + n]), acc[p]);
      if (more) tensor_matrix_column(e + 1, matrices, lf, n);
      if (more && n == NT - 1)
#pragma unroll
        for (uint t = 0; t + 1 < NT; ++t) tensor_gather_step(dof, x, xf, t);
      double2 yt[VT2];  // yt[v]: rows step_row(2 n, q), step_row(2 n + 1, q) of Y_i, vector 8 v + g
#pragma unroll
      for (uint p = 0; p < VP; ++p) {
        yt[2 * p] = acc[p].xy;
        yt[2 * p + 1] = acc[p].zw;
      }
#pragma unroll
      for (uint i = 0; i < PB; ++i) {
        const uint3 b = projection_block(i);
        sum[i] = mma_16x8x8(tile_operand(xf, n, b.y, b.z), yt[b.x], sum[i]);
      }
    }
    if (more) {
      tensor_gather_step(dof, x, xf, NT - 1);
      if (e + 2 < end) tensor_dofs(e + 2, indices, dof);
    }
  }
#endif
  // Lane 4 g + q holds (A row g, columns 2 q, 2 q + 1) and (A row g + 8, the same columns) of each
  // block: K+ entries (8 r1 + g, 8 c + 2 q + h) and (8 r2 + g, ...), stored in the upper triangle;
  // of a diagonal tile (r = c) only the entries on and above the diagonal.
  const uint g = lane_group(), q = lane_quad(), chunk = first_chunk + own;
#pragma unroll
  for (uint i = 0; i < PB; ++i) {
    const uint3 b = projection_block(i);
    const double values[4] = {sum[i].x, sum[i].y, sum[i].z, sum[i].w};
#pragma unroll
    for (uint h = 0; h < 4; ++h) {
      const uint r = h < 2 ? b.y : b.z, va = 8 * r + g, vb = 8 * b.x + 2 * q + h % 2;
      const uint lo = min(va, vb), hi = max(va, vb);
      if (r < VT && (r != b.x || va <= vb) && hi < K)
        partial[(size_t)(lo * K - lo * (lo - 1) / 2 + (hi - lo)) * chunks + chunk] = values[h];
    }
  }
}
