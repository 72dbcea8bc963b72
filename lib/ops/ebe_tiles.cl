// A part of the element-by-element kernels (ebe.cl includes it): the tile layout, Y = K X
// (ebe_multiply) and the projection (ebe_project) with the element's matrix unpacked in local
// memory and the products in register tiles of TR rows x 4 vectors (see ebe.cl).

#define LS (L | 1)              // row stride of the unpacked matrix: odd, spreading its transposed stores over banks
#define RG (L / TR)             // row groups of the product tiles
#define RG2 ((RG + 1) / 2 * 2)  // ... rounded up to even
#define KQ2 ((KQ + 1) / 2 * 2)  // vector groups rounded up to even

// The product tile of work-item t (false: none): rows r0 .. r0 + TR - 1, vectors j0 .. j0 + 3.
// Work-items t and t^1 share rows (L_i's loads), t and t^2 share vectors (X_i's loads); RG2 * KQ2
// work-items cover every tile.
inline bool product_place(const uint t, uint* r0, uint* j0) {
  const uint q = t >> 2, rg = 2 * (q / (KQ2 / 2)) + ((t >> 1) & 1), cg = 2 * (q % (KQ2 / 2)) + (t & 1);
  *r0 = rg * TR;
  *j0 = cg * 4;
  return rg < RG && cg < KQ;
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
// staging made it slower: bench/results/2026-11-28-design-measurements.md).
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
// t / K + RS, ... (faster so: bench/results/2026-11-28-design-measurements.md).
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
