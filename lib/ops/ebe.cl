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
// same projection tiles. Where both layouts issue the same multiply-adds (27 vectors of 24-DOF
// bricks) it ran 1.30x faster on an H200 (and 2.5x slower on PoCL: choose_ebe_layout() measures).
// Both give the same bits: each sum runs over the same terms in the same order.
// NVIDIA's local memory returns one 32-bit word per work-item a cycle, twice that when neighbouring
// work-items (t and t^1, or t and t^2) read the same address: the tiles are laid out so that most
// loads are shared that way (product_place, projection_place; neutral elsewhere). The
// projection's staging waits for memory once an element (stage_element_batched, load_packed).

#define KP ((K + 3) / 4 * 4)  // row stride of X_i and Y_i in local memory: whole 4-value loads
#define KQ (KP / 4)           // 4-vector columns of a tile
#define PACKED (L * (L + 1) / 2)
#define LS (L | 1)              // row stride of the unpacked matrix: odd, spreading its transposed stores over banks
#define RG (L / TR)             // row groups of the product tiles
#define RG2 ((RG + 1) / 2 * 2)  // ... rounded up to even
#define KQ2 ((KQ + 1) / 2 * 2)  // vector groups rounded up to even
#define REAL2 CONCAT(REAL, 2)
#define REAL4 CONCAT(REAL, 4)

// The product tile of work-item t (false: none): rows r0 .. r0 + TR - 1, vectors j0 .. j0 + 3.
// Work-items t and t^1 share rows (L_i's loads), t and t^2 share vectors (X_i's loads); RG2 * KQ2
// work-items cover every tile.
inline bool product_place(const uint t, uint* r0, uint* j0) {
  const uint q = t >> 2, rg = 2 * (q / (KQ2 / 2)) + ((t >> 1) & 1), cg = 2 * (q % (KQ2 / 2)) + (t & 1);
  *r0 = rg * TR;
  *j0 = cg * 4;
  return rg < RG && cg < KQ;
}

// The projection tile (aq, bq), aq <= bq, of work-item n (false: none): the upper triangle of
// 4 x 4 tiles row by row, each row's count rounded up to even so that n and n^1 share aq.
inline bool projection_place(uint n, uint* aq, uint* bq) {
  uint a = 0;
  while (a < KQ) {
    const uint count = KQ - a, padded = count + (count & 1);
    if (n < padded) break;
    n -= padded;
    ++a;
  }
  *aq = a;
  *bq = a + n;
  return a < KQ && a + n < KQ;
}

// The pad columns of X_i's rows (j >= K), which 4-value loads read, are zero: set once per group.
inline void clear_vector_pads(__local REAL* Xs) {
#if KP > K
  for (uint p = get_local_id(0); p < L * (KP - K); p += WG) Xs[(p / (KP - K)) * KP + K + p % (KP - K)] = 0;
#endif
}

// Staging of element e: its matrix unpacked into Ls (L x L, rows LS apart) and X_i into Xs
// (L x KP, zero at constrained DOFs); `rc` maps a packed position to (row << 8) | column. Y = K X
// stages one value at a time: few registers, which its scatter's latency needs more (batched
// staging made it 29 % slower on an H200).
inline void stage_element(const uint e, __global const REAL* restrict matrices, __global const int* restrict indices,
                          __global const ushort* restrict rc, __global const REAL* restrict x, __local REAL* Ls,
                          __local REAL* Xs) {
  __global const REAL* m = matrices + (size_t)e * PACKED;
  for (uint p = get_local_id(0); p < PACKED; p += WG) {
    const uint r = rc[p] >> 8, c = rc[p] & 0xff;
    const REAL v = m[p];
    Ls[r * LS + c] = v;
    Ls[c * LS + r] = v;
  }
  for (uint p = get_local_id(0); p < L * K; p += WG) {
    const uint c = p / K, j = p - c * K;
    const int d = indices[(size_t)e * L + c];
    Xs[c * KP + j] = d >= 0 ? x[(size_t)d * K + j] : (REAL)0;
  }
}

// The projection stages in batches: every load is issued before the first store, and the DOF
// numbers come from `dof` (load_dofs, during the previous element's products), so a work-item
// waits for memory once an element. Work-item t stages vector t % K of X_i's rows t / K,
// t / K + RS, ... (the projection ran 1.22x faster so on an H200).
#define NL ((PACKED + WG - 1) / WG)  // matrix values a work-item stages
#define RS (WG / K)                  // rows of X_i one sweep of the work-group stages (K <= WG)
#define NS ((L + RS - 1) / RS)       // sweeps: X_i values a work-item stages

// dof[i]: the DOF of row t / K + RS i of element e (-1: constrained, or no such row).
inline void load_dofs(const uint e, __global const int* restrict indices, int* dof) {
  const uint t = get_local_id(0), s = t / K;
#pragma unroll
  for (uint i = 0; i < NS; ++i) {
    const uint c = s + RS * i;
    dof[i] = t < RS * K && c < L ? indices[(size_t)e * L + c] : -1;
  }
}

inline void stage_element_batched(const uint e, __global const REAL* restrict matrices,
                                  __global const ushort* restrict rc, __global const REAL* restrict x, const int* dof,
                                  __local REAL* Ls, __local REAL* Xs) {
  const uint t = get_local_id(0), s = t / K, j = t % K;
  __global const REAL* m = matrices + (size_t)e * PACKED;
  REAL lv[NL];
  ushort rcv[NL];
#pragma unroll
  for (uint i = 0; i < NL; ++i) {
    const uint p = t + i * WG;
    lv[i] = p < PACKED ? m[p] : (REAL)0;
    rcv[i] = p < PACKED ? rc[p] : (ushort)0;
  }
  REAL xv[NS];
#pragma unroll
  for (uint i = 0; i < NS; ++i) xv[i] = dof[i] >= 0 ? x[(size_t)dof[i] * K + j] : (REAL)0;
#pragma unroll
  for (uint i = 0; i < NL; ++i) {
    if (t + i * WG < PACKED) {
      const uint r = rcv[i] >> 8, c = rcv[i] & 0xff;
      Ls[r * LS + c] = lv[i];
      Ls[c * LS + r] = lv[i];
    }
  }
#pragma unroll
  for (uint i = 0; i < NS; ++i) {
    const uint c = s + RS * i;
    if (t < RS * K && c < L) Xs[c * KP + j] = xv[i];
  }
}

// The product tile at (r0, j0): rows r0 .. r0 + TR - 1 of Y_i, vectors j0 .. j0 + 3, as acc[0..TR).
inline void product_tile(const uint r0, const uint j0, __local const REAL* Ls, __local const REAL* Xs, REAL4* acc) {
#pragma unroll
  for (uint i = 0; i < TR; ++i) acc[i] = (REAL4)(0);
#pragma unroll 4
  for (uint c = 0; c < L; ++c) {
    const REAL4 xv = vload4(0, Xs + c * KP + j0);
#if TR % 2 == 0
#pragma unroll
    for (uint i = 0; i < TR; i += 2) {
      const REAL2 lv = vload2(0, Ls + c * LS + r0 + i);
      acc[i] += lv.x * xv;
      acc[i + 1] += lv.y * xv;
    }
#else
#pragma unroll
    for (uint i = 0; i < TR; ++i) acc[i] += Ls[c * LS + r0 + i] * xv;
#endif
  }
}

#ifdef ATOMICS
// A compare-and-swap loop on REAL's bits whose every access to *p is atomic (the first one reads it).
#ifdef REAL_IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define REAL_BITS ulong
#define CMPXCHG atom_cmpxchg
#else
#define REAL_BITS uint
#define CMPXCHG atomic_cmpxchg
#endif
inline void add_to(volatile __global REAL* p, const REAL v) {
  volatile __global REAL_BITS* bits = (volatile __global REAL_BITS*)p;
  union { REAL_BITS u; REAL f; } seen, updated;
  seen.u = CMPXCHG(bits, (REAL_BITS)0, (REAL_BITS)0);
  REAL_BITS expected;
  do {
    expected = seen.u;
    updated.f = seen.f + v;
    seen.u = CMPXCHG(bits, expected, updated.u);
  } while (seen.u != expected);
}
#else
// Colouring: no other work-item of this launch touches this DOF.
inline void add_to(__global REAL* p, const REAL v) { *p += v; }
#endif

// Y += K X over elements first .. first + count - 1 (one colour when ATOMICS is off), element e
// stored at order[e] (resident elements keep the caller's order), or at e where order is null.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ebe_multiply(
    const uint first, const uint count, __global const REAL* restrict matrices, __global const int* restrict indices,
    __global const ushort* restrict rc, __global const REAL* restrict x, __global REAL* y,
    __global const uint* restrict order) {
  __local REAL Ls[L * LS];
  __local REAL Xs[L * KP];
  clear_vector_pads(Xs);
  const uint t = get_local_id(0);
  const uint begin = first + get_group_id(0) * CHUNK;
  const uint end = min(begin + CHUNK, first + count);
  for (uint e = begin; e < end; ++e) {
    const uint stored = order ? order[e] : e;
    stage_element(stored, matrices, indices, rc, x, Ls, Xs);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint r0, j0;
    if (product_place(t, &r0, &j0)) {
      REAL4 acc[TR];
      product_tile(r0, j0, Ls, Xs, acc);
#pragma unroll
      for (uint i = 0; i < TR; ++i) {
        const int d = indices[(size_t)stored * L + r0 + i];
        if (d < 0) continue;
        __global REAL* row = y + (size_t)d * K + j0;
        add_to(row, acc[i].x);
        if (j0 + 1 < K) add_to(row + 1, acc[i].y);
        if (j0 + 2 < K) add_to(row + 2, acc[i].z);
        if (j0 + 3 < K) add_to(row + 3, acc[i].w);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// Row r of projection tile (aq, bq): sum[u] += X_i[r][4 aq + u] * Y_i[r][4 bq .. 4 bq + 3].
inline void project_row(__local const REAL* Xs, __local const REAL* Ys, const uint r, const uint aq, const uint bq,
                        REAL4* sum) {
  const REAL4 xa = vload4(0, Xs + r * KP + 4 * aq), yb = vload4(0, Ys + r * KP + 4 * bq);
  sum[0] += xa.x * yb;
  sum[1] += xa.y * yb;
  sum[2] += xa.z * yb;
  sum[3] += xa.w * yb;
}

// Tile n's sums of chunk g into partial[entry * chunks + g], entry numbering the upper triangle row
// by row (nothing when n is no tile).
inline void write_tile(const uint n, const REAL4* sum, __global REAL* restrict partial, const uint g,
                       const uint chunks) {
  uint aq, bq;
  if (!projection_place(n, &aq, &bq)) return;
#pragma unroll
  for (uint u = 0; u < 4; ++u) {
    const uint a = 4 * aq + u;
    const REAL values[4] = {sum[u].x, sum[u].y, sum[u].z, sum[u].w};
#pragma unroll
    for (uint v = 0; v < 4; ++v) {
      const uint b = 4 * bq + v;
      if (a <= b && b < K) partial[(size_t)(a * K - a * (a - 1) / 2 + (b - a)) * chunks + g] = values[v];
    }
  }
}

// The upper triangle of sum_i X_i^T L_i X_i over the chunk of work-group g, into
// partial[entry * chunks + first_chunk + g], entry numbering the upper triangle row by row.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ebe_project(
    const uint first, const uint count, __global const REAL* restrict matrices, __global const int* restrict indices,
    __global const ushort* restrict rc, __global const REAL* restrict x, __global REAL* restrict partial,
    const uint first_chunk, const uint chunks) {
  __local REAL Ls[L * LS];
  __local REAL Xs[L * KP];
  __local REAL Ys[L * KP];
  clear_vector_pads(Xs);
  const uint t = get_local_id(0);
  const uint begin = first + get_group_id(0) * CHUNK;
  const uint end = min(begin + CHUNK, first + count);
  REAL4 sum[TPT][4];  // sum[s][u]: row 4 aq + u of tile t + s WG, vectors 4 bq .. 4 bq + 3
#pragma unroll
  for (uint s = 0; s < TPT; ++s)
#pragma unroll
    for (uint u = 0; u < 4; ++u) sum[s][u] = (REAL4)(0);
  int dof[NS];
  if (begin < end) load_dofs(begin, indices, dof);
  for (uint e = begin; e < end; ++e) {
    stage_element_batched(e, matrices, rc, x, dof, Ls, Xs);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (e + 1 < end) load_dofs(e + 1, indices, dof);  // in flight during the products
    uint r0, j0;
    if (product_place(t, &r0, &j0)) {
      REAL4 acc[TR];
      product_tile(r0, j0, Ls, Xs, acc);
#pragma unroll
      for (uint i = 0; i < TR; ++i) vstore4(acc[i], 0, Ys + (r0 + i) * KP + j0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint s = 0; s < TPT; ++s) {
      const uint n = t + s * WG;
      uint aq, bq;
      if (projection_place(n, &aq, &bq)) {
#pragma unroll 4
        for (uint r = 0; r < L; ++r) project_row(Xs, Ys, r, aq, bq, sum[s]);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#pragma unroll
  for (uint s = 0; s < TPT; ++s) write_tile(t + s * WG, sum[s], partial, first_chunk + get_group_id(0), chunks);
}

#ifdef COLUMNS
// The column layout (see the top): work-group CWG, CTPT projection tiles per work-item.
#define NLC ((PACKED + CWG - 1) / CWG)  // packed matrix values a work-item stages

// xr[c] = X[V_i[c]][j] for work-item j (0 at constrained DOFs and for j >= K), Ds holding V_i.
inline void gather_column(__local const int* Ds, __global const REAL* restrict x, REAL* xr) {
  const uint j = get_local_id(0);
#pragma unroll
  for (uint c = 0; c < L; ++c) {
    const int d = Ds[c];
    xr[c] = d >= 0 && j < K ? x[(size_t)d * K + j] : (REAL)0;
  }
}

inline void load_packed(const uint e, __global const REAL* restrict matrices, REAL* lv) {
  const uint t = get_local_id(0);
  __global const REAL* m = matrices + (size_t)e * PACKED;
#pragma unroll
  for (uint i = 0; i < NLC; ++i) lv[i] = t + i * CWG < PACKED ? m[t + i * CWG] : (REAL)0;
}

// The packed matrix goes to local memory as pairs, so that the product reads two values a load.
inline void store_packed(const REAL* lv, __local REAL2* Lp) {
  const uint t = get_local_id(0);
  __local REAL* p = (__local REAL*)Lp;
#pragma unroll
  for (uint i = 0; i < NLC; ++i)
    if (t + i * CWG < PACKED) p[t + i * CWG] = lv[i];
}

inline REAL packed_value(__local const REAL2* Lp, const uint p) {
  const REAL2 q = Lp[p >> 1];
  return (p & 1) ? q.y : q.x;
}

// yr = L_i xr, L_i symmetric from its packed upper triangle: entry (r, c > r) adds to rows r and c,
// so each row's sum runs over c in increasing order, as product_tile's does. Unrolled whole: the
// indices into xr and yr are constants, so both stay in registers.
inline void product_column(__local const REAL2* Lp, const REAL* xr, REAL* yr) {
#pragma unroll
  for (uint r = 0; r < L; ++r) yr[r] = 0;
#pragma unroll
  for (uint r = 0; r < L; ++r) {
    const uint base = r * L - r * (r - 1) / 2 - r;  // packed position of (r, 0) if it were stored
    yr[r] += packed_value(Lp, base + r) * xr[r];
#pragma unroll
    for (uint c = r + 1; c < L; ++c) {
      const REAL v = packed_value(Lp, base + c);
      yr[r] += v * xr[c];
      yr[c] += v * xr[r];
    }
  }
}

// As ebe_project, in the column layout. Element e + 1's matrix and X_i are loaded while element e
// is computed (its X_i during the projection), and its DOF numbers one element earlier still.
__kernel __attribute__((reqd_work_group_size(CWG, 1, 1))) void ebe_project_columns(
    const uint first, const uint count, __global const REAL* restrict matrices, __global const int* restrict indices,
    __global const REAL* restrict x, __global REAL* restrict partial, const uint first_chunk, const uint chunks) {
  __local REAL2 Lp[(PACKED + 1) / 2];
  __local int Ds[L];  // the DOF numbers of the element whose X_i is gathered next
  __local REAL Xs[L * KP];
  __local REAL Ys[L * KP];
  const uint t = get_local_id(0);
  const uint begin = first + get_group_id(0) * CHUNK;
  const uint end = min(begin + CHUNK, first + count);
  REAL4 sum[CTPT][4];  // as ebe_project's
#pragma unroll
  for (uint s = 0; s < CTPT; ++s)
#pragma unroll
    for (uint u = 0; u < 4; ++u) sum[s][u] = (REAL4)(0);
  REAL lv[NLC], xr[L];
  int next_dof = -1;  // work-item t < L: DOF t of the element after the one gathered next
  if (begin < end) {
    load_packed(begin, matrices, lv);
    if (t < L) Ds[t] = indices[(size_t)begin * L + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    gather_column(Ds, x, xr);
    if (t < L && begin + 1 < end) next_dof = indices[(size_t)(begin + 1) * L + t];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (uint e = begin; e < end; ++e) {
    store_packed(lv, Lp);
    if (t < L) Ds[t] = next_dof;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (e + 1 < end) load_packed(e + 1, matrices, lv);
    REAL yr[L];
    product_column(Lp, xr, yr);
    if (t < KP) {  // work-items K .. KP - 1 write the pads' zeros
#pragma unroll
      for (uint c = 0; c < L; ++c) {
        Xs[c * KP + t] = xr[c];
        Ys[c * KP + t] = yr[c];
      }
    }
    if (e + 1 < end) gather_column(Ds, x, xr);  // in flight during the projection
    if (t < L && e + 2 < end) next_dof = indices[(size_t)(e + 2) * L + t];
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint s = 0; s < CTPT; ++s) {
      uint aq, bq;
      if (projection_place(t + s * CWG, &aq, &bq)) {
#pragma unroll
        for (uint r = 0; r < L; ++r) project_row(Xs, Ys, r, aq, bq, sum[s]);
      }
    }
  }
#pragma unroll
  for (uint s = 0; s < CTPT; ++s) write_tile(t + s * CWG, sum[s], partial, first_chunk + get_group_id(0), chunks);
}
#endif

#ifdef TENSOR
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
// registers). 0.80 ms, not 0.99, for 27 vectors of 602,112 bricks on an H200.
#define NT ((L + 7) / 8)        // 8-row tiles of an element, and steps of 8 rows
#define VT ((K + 7) / 8)        // 8-vector tiles ...
#define VP ((VT + 1) / 2)       // ... in pairs
#define VT2 (2 * VP)            // ... padded to whole pairs

// Warps a work-group, each on a chunk of its own (no local memory, no barriers). On an H200 1 and 4
// ran alike (1.07 ms for 27 vectors of 602,112 bricks); more than 8 exceed the work-group the
// driver allows at this kernel's registers.
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
// 512 bytes; a diagonal block from its packed triangle (5 % faster than packed rows on an H200).
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
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = REDUCE_GROUP / 2; stride > 0; stride >>= 1) {
    if (lid < stride) sums[lid] += sums[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) result[entry] = sums[0];
}
