// A part of the element-by-element kernels (ebe.cl includes it under COLUMNS): the column layout
// of the projection (ebe_project_columns, see ebe.cl).

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
