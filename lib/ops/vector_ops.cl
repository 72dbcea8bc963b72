// Vector operations of the Krylov solvers on k vectors stored interleaved (n x K row-major,
// element (r, j) at r * K + j), with one coefficient per vector read from `coef` (slot s of
// vector j at coef[s * K + j]). Host side: lib/ops/vector_ops.cpp.
//
// Reductions run in a fixed order, so that a solve gives the same bits every time on a device:
// GROUPS work-groups of GROUP work-items (fixed for a device and a length), work-item t of group g
// sums rows g * GROUP + t, + GROUPS * GROUP, ... in order, the group adds its items in a fixed
// tree, and `finish` adds the groups' partial sums in group order. A reducing kernel writes set s
// of its dot products (K values) to partial[(s * GROUPS + g) * K + j].
//
// Build options: -DREAL and -DVW (the prologue: VW is the widest of 8, 4, 2, 1 dividing K), -DK,
// -DGROUP (a power of two), -DGROUPS.
//
// The reductions give each work-item whole rows, and a row's K values are contiguous: they are read
// and written VW at a time (vloadVW), so that each access of a warp moves whole rows instead of
// one value out of every K (4x fewer memory transactions at K = 12). Each vector's sum still runs
// over the rows in the same order.

#define COEF(slot, j) coef[(slot) * K + (j)]
#define NV (K / VW)  // VW-wide pieces of a row (REALV, LOADV, STOREV: the prologue)

// The column of element e (no remainder operator: see spmm.cl's bsr_multirow).
inline uint column_of(size_t e) { return (uint)(e - (e / K) * K); }

#include "base/group_reduce.cl"

// Adds the GROUP values of scratch (one per work-item, written by the caller) in the fixed tree of
// GROUP_REDUCE and stores the sum at *out from work-item 0. Every work-item of the group must call it.
void group_sum(__local REAL* scratch, __global REAL* out) {
  const uint t = (uint)get_local_id(0);
#define SCRATCH(i) scratch[i]
  GROUP_REDUCE(SCRATCH, t, GROUP, REDUCE_SUM);
#undef SCRATCH
  if (t == 0) *out = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // before the caller writes scratch again
}

// Stores the K sums of acc (NV pieces of VW) of this group as set `set` of the partial sums.
void store_partials(const REALV* acc, __local REAL* scratch, __global REAL* partial, uint set) {
  const uint t = (uint)get_local_id(0), g = (uint)get_group_id(0);
  REAL sums[K];
  for (uint i = 0; i < NV; ++i) STOREV(acc[i], i, sums);
  for (uint j = 0; j < K; ++j) {
    scratch[t] = sums[j];
    group_sum(scratch, partial + ((size_t)set * GROUPS + g) * K + j);
  }
}

#define FOR_MY_ROWS(r) for (size_t r = get_global_id(0); r < rows; r += (size_t)GROUPS * GROUP)

// ---- elementwise ----

// y = a x + b y.
__kernel void axpby(const ulong n, __global const REAL* restrict coef, const uint sa, const uint sb,
                    __global const REAL* x, const ulong x_offset, __global REAL* y, const ulong y_offset) {
  const size_t e = get_global_id(0);
  if (e >= n) return;
  const uint j = column_of(e);
  y[y_offset + e] = COEF(sa, j) * x[x_offset + e] + COEF(sb, j) * y[y_offset + e];
}

// y = a x.
__kernel void scale(const ulong n, __global const REAL* restrict coef, const uint sa, __global const REAL* x,
                    const ulong x_offset, __global REAL* y, const ulong y_offset) {
  const size_t e = get_global_id(0);
  if (e >= n) return;
  y[y_offset + e] = COEF(sa, column_of(e)) * x[x_offset + e];
}

// y = d .* x, d holding one value per row (scalar Jacobi).
__kernel void multiply_rows(const ulong n, __global const REAL* restrict d, __global const REAL* x,
                            const ulong x_offset, __global REAL* y, const ulong y_offset) {
  const size_t e = get_global_id(0);
  if (e >= n) return;
  y[y_offset + e] = d[e / K] * x[x_offset + e];
}

// w += sign * sum_s h_s V_s over `count` vectors sets V_s = basis + s * stride (h from results).
__kernel void combine(const ulong n, __global const REAL* basis, const ulong stride, const uint count,
                      __global const REAL* restrict h, const uint h_offset, const REAL sign, __global REAL* w,
                      const ulong w_offset) {
  const size_t e = get_global_id(0);
  if (e >= n) return;
  const uint j = column_of(e);
  REAL acc = w[w_offset + e];
  for (uint s = 0; s < count; ++s) acc += sign * h[h_offset + s * K + j] * basis[s * stride + e];
  w[w_offset + e] = acc;
}

// p = r + beta (p - omega v)   (BiCGStab's new direction)
__kernel void bicg_direction(const ulong n, __global const REAL* restrict coef, const uint s_beta, const uint s_omega,
                             __global REAL* restrict p, __global const REAL* restrict r,
                             __global const REAL* restrict v) {
  const size_t e = get_global_id(0);
  if (e >= n) return;
  const uint j = column_of(e);
  p[e] = r[e] + COEF(s_beta, j) * (p[e] - COEF(s_omega, j) * v[e]);
}

// Value e of a renumbering's n = rows x width values (a 1-D range, as the elementwise kernels
// take): its row *i and column *c, and row i's row in the caller's order, which lies in block
// i / b of the device's order, block perm[i / b] of the caller's. (Remainders written as
// differences: the remainder LLVM derives from a quotient carries a `freeze`, which Oclgrind's
// uninitialised-value check cannot run.)
inline size_t renumbered(const size_t e, const ulong width, const ulong b, __global const uint* restrict perm,
                         size_t* i, size_t* c) {
  *i = e / width;
  *c = e - *i * width;
  const size_t block = *i / b;
  return (size_t)perm[block] * b + (*i - block * b);
}

// Renumbering by blocks of b rows, with a window of columns: row i of y (y_width values) takes
// the caller's row of x (above), columns first .. first + count of its x_width; the columns past
// count, and the rows past `rows` (a partial last block's padding), are zero. n: y's values.
__kernel void gather_columns(const ulong n, const ulong rows, const ulong b, __global const uint* restrict perm,
                             __global const REAL* restrict x, const ulong x_offset, const ulong x_width,
                             const ulong first, const ulong count, __global REAL* restrict y, const ulong y_offset,
                             const ulong y_width) {
  const size_t e = get_global_id(0);
  if (e >= n) return;
  size_t i, c;
  const size_t from = renumbered(e, y_width, b, perm, &i, &c);
  y[y_offset + e] = c < count && from < rows ? x[x_offset + from * x_width + first + c] : 0;
}

// The renumbering undone: the caller's row of y (above), columns first .. first + count of its
// y_width, takes the first count values of row i of x (x_width values); y's other columns, and its
// rows past `rows`, are left as they are. n: the values taken, (rows of x) x count.
__kernel void scatter_columns(const ulong n, const ulong rows, const ulong b, __global const uint* restrict perm,
                              __global const REAL* restrict x, const ulong x_offset, const ulong x_width,
                              const ulong count, __global REAL* restrict y, const ulong y_offset,
                              const ulong y_width, const ulong first) {
  const size_t e = get_global_id(0);
  if (e >= n) return;
  size_t i, c;
  const size_t to = renumbered(e, count, b, perm, &i, &c);
  if (to < rows) y[y_offset + to * y_width + first + c] = x[x_offset + i * x_width + c];
}

// ---- reductions ----

// Set s (the second NDRange dimension) of the dot products x_s . y, x_s = x + x_offset + s * stride
// (offsets and stride in whole rows: multiples of K, so of VW).
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void dot_partials(const ulong rows, __global const REAL* x, const ulong x_offset, const ulong stride,
                  __global const REAL* y, const ulong y_offset, __global REAL* partial) {
  __local REAL scratch[GROUP];
  const uint s = (uint)get_global_id(1);
  // The offsets (whole rows) go into the load indices, not the pointers: with the pointers moved,
  // NVIDIA's compiler no longer knew them aligned, and the product of two vectors ran at half speed.
  const size_t xo = (x_offset + s * stride) / VW, yo = y_offset / VW;
  REALV acc[NV];
  for (uint i = 0; i < NV; ++i) acc[i] = 0;
  FOR_MY_ROWS(r) {
    for (uint i = 0; i < NV; ++i) acc[i] += LOADV(xo + r * NV + i, x) * LOADV(yo + r * NV + i, y);
  }
  store_partials(acc, scratch, partial, s);
}

// Two dot products in one pass: a . b (set 0) and c . d (set 1).
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void dot_pair_partials(const ulong rows, __global const REAL* a, __global const REAL* b, __global const REAL* c,
                       __global const REAL* d, __global REAL* partial) {
  __local REAL scratch[GROUP];
  REALV ab[NV], cd[NV];
  for (uint i = 0; i < NV; ++i) ab[i] = cd[i] = 0;
  FOR_MY_ROWS(r) {
    for (uint i = 0; i < NV; ++i) {
      const size_t v = r * NV + i;
      ab[i] += LOADV(v, a) * LOADV(v, b);
      cd[i] += LOADV(v, c) * LOADV(v, d);
    }
  }
  store_partials(ab, scratch, partial, 0);
  store_partials(cd, scratch, partial, 1);
}

// results[result_offset + o] = the sum over the groups, in group order, of output o = s * K + j.
__kernel void finish(__global const REAL* restrict partial, const uint outputs, __global REAL* restrict results,
                     const uint result_offset) {
  const uint o = (uint)get_global_id(0);
  if (o >= outputs) return;
  const uint s = o / K, j = o - s * K;
  REAL sum = 0;
  for (uint g = 0; g < GROUPS; ++g) sum += partial[((size_t)s * GROUPS + g) * K + j];
  results[result_offset + o] = sum;
}

// ---- fused solver steps (each replaces several elementwise kernels and a dot) ----

// CG: x += alpha p; r -= alpha q; partial sums of r . r.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void cg_update(const ulong rows, __global const REAL* restrict coef, const uint s_alpha, __global REAL* restrict x,
               __global const REAL* restrict p, __global REAL* restrict r, __global const REAL* restrict q,
               __global REAL* partial) {
  __local REAL scratch[GROUP];
  REALV rr[NV];
  for (uint i = 0; i < NV; ++i) rr[i] = 0;
  FOR_MY_ROWS(row) {
    for (uint i = 0; i < NV; ++i) {
      const size_t v = row * NV + i;
      const REALV alpha = LOADV(s_alpha * NV + i, coef);
      STOREV(alpha * LOADV(v, p) + LOADV(v, x), v, x);
      const REALV re = -alpha * LOADV(v, q) + LOADV(v, r);
      STOREV(re, v, r);
      rr[i] += re * re;
    }
  }
  store_partials(rr, scratch, partial, 0);
}

// BiCGStab: s = r - alpha v; partial sums of s . s.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void bicg_half(const ulong rows, __global const REAL* restrict coef, const uint s_alpha,
               __global const REAL* restrict r, __global const REAL* restrict v, __global REAL* restrict s,
               __global REAL* partial) {
  __local REAL scratch[GROUP];
  REALV ss[NV];
  for (uint i = 0; i < NV; ++i) ss[i] = 0;
  FOR_MY_ROWS(row) {
    for (uint i = 0; i < NV; ++i) {
      const size_t e = row * NV + i;
      const REALV se = -LOADV(s_alpha * NV + i, coef) * LOADV(e, v) + LOADV(e, r);
      STOREV(se, e, s);
      ss[i] += se * se;
    }
  }
  store_partials(ss, scratch, partial, 0);
}

// BiCGStab: x += alpha phat + omega shat; r = s - omega t; partial sums of r . r (set 0) and
// r0 . r (set 1).
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void bicg_update(const ulong rows, __global const REAL* restrict coef, const uint s_alpha, const uint s_omega,
                 __global REAL* restrict x, __global const REAL* restrict phat, __global const REAL* restrict shat,
                 __global const REAL* restrict s, __global const REAL* restrict t, __global REAL* restrict r,
                 __global const REAL* restrict r0, __global REAL* partial) {
  __local REAL scratch[GROUP];
  REALV rr[NV], r0r[NV];
  for (uint i = 0; i < NV; ++i) rr[i] = r0r[i] = 0;
  FOR_MY_ROWS(row) {
    for (uint i = 0; i < NV; ++i) {
      const size_t e = row * NV + i;
      const REALV alpha = LOADV(s_alpha * NV + i, coef), omega = LOADV(s_omega * NV + i, coef);
      STOREV(omega * LOADV(e, shat) + (alpha * LOADV(e, phat) + LOADV(e, x)), e, x);
      const REALV re = -omega * LOADV(e, t) + LOADV(e, s);
      STOREV(re, e, r);
      rr[i] += re * re;
      r0r[i] += LOADV(e, r0) * re;
    }
  }
  store_partials(rr, scratch, partial, 0);
  store_partials(r0r, scratch, partial, 1);
}
