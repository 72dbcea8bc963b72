// The tensor layout's factored elements (lib/ops/ebe.cpp): each positive semi-definite element
// matrix L_i, given as packed upper rows, gives its pivoted Cholesky factor
//   P L_i P^T = R^T R,   R upper triangular, rows past L_i's rank zero,
// in the factored storage order (factored_position), and the element's DOF numbers permuted by P.
// Then X_i^T L_i X_i = (R X_i)^T (R X_i): the projection's tensor cores multiply by R's upper
// triangle of blocks, 6 of 9 for a 24-DOF brick (ebe.cl, FACTORED). Y = K X keeps reading L_i.
//
// Diagonal pivoting (the largest remaining diagonal first) keeps the factor stable on singular
// elements (a free brick has rank 18): the factorization stops once no remaining diagonal exceeds
// STOP times the largest one, and then, for a semi-definite matrix, no remaining entry does either.
// A remaining entry above FAIL times the largest diagonal proves the matrix indefinite: the element
// cannot be factored so, and `failed` is set (the operator then keeps L_i itself).
//
// One work-item an element (setup work, done once as the elements arrive). Build options: L (a
// multiple of 8), PACKED, REAL (double).

#define NT (L / 8)
#define STOP (L * DBL_EPSILON)       // a pivot at most this (relative) ends the factor: rounding
#define FAIL (64 * L * DBL_EPSILON)  // a remainder above this (relative): not semi-definite

// Packed upper-row position of entry (i, j) of an L x L symmetric matrix.
inline uint packed_position(const uint i, const uint j) {
  const uint lo = min(i, j), hi = max(i, j);
  return lo * (2 * L - 1 - lo) / 2 + hi;
}

// Where R[i][j] (i <= j) is stored: the 8 x 8 blocks above the diagonal, row of blocks by row of
// blocks, each by rows (ebe.cl reads row g, columns 2 q and 2 q + 1, as one 16-byte load), then the
// diagonal blocks as packed upper triangles.
inline uint factored_position(const uint i, const uint j) {
  const uint a = i / 8, b = j / 8, r = i % 8, c = j % 8;
  if (a < b) return 64 * (a * (2 * NT - a - 1) / 2 + b - a - 1) + 8 * r + c;
  return 32 * NT * (NT - 1) + 36 * a + r * (15 - r) / 2 + c;
}

__kernel void ebe_cholesky(const uint count, __global const REAL* restrict matrices,
                           __global const int* restrict indices, __global REAL* restrict factors,
                           __global int* restrict factor_indices, volatile __global int* restrict failed) {
  const uint e = get_global_id(0);
  if (e >= count) return;
  __global const REAL* m = matrices + (size_t)e * PACKED;
  // a: the element, in its own numbering; step k overwrites row perm[k] with R's row k.
  REAL a[PACKED];
  uchar perm[L];
  REAL largest = 0;
  for (uint p = 0; p < PACKED; ++p) a[p] = m[p];
  for (uint i = 0; i < L; ++i) {
    perm[i] = (uchar)i;
    largest = max(largest, a[packed_position(i, i)]);
  }
  uint rank = L;
  for (uint k = 0; k < L; ++k) {
    uint pivot = k;
    for (uint j = k + 1; j < L; ++j)
      if (a[packed_position(perm[j], perm[j])] > a[packed_position(perm[pivot], perm[pivot])]) pivot = j;
    const uchar swap = perm[k];
    perm[k] = perm[pivot];
    perm[pivot] = swap;
    const uint pk = perm[k];
    const REAL d = a[packed_position(pk, pk)];
    if (!(d > STOP * largest)) {
      rank = k;
      break;
    }
    const REAL rkk = sqrt(d);
    a[packed_position(pk, pk)] = rkk;
    for (uint j = k + 1; j < L; ++j) a[packed_position(pk, perm[j])] /= rkk;
    for (uint i = k + 1; i < L; ++i) {
      const REAL rki = a[packed_position(pk, perm[i])];
      for (uint j = i; j < L; ++j) a[packed_position(perm[i], perm[j])] -= rki * a[packed_position(pk, perm[j])];
    }
  }
  // What is left past the rank is dropped: within FAIL of zero for a semi-definite element.
  for (uint i = rank; i < L; ++i)
    for (uint j = i; j < L; ++j)
      if (!(fabs(a[packed_position(perm[i], perm[j])]) <= FAIL * largest)) atomic_or(failed, 1);
  __global REAL* r = factors + (size_t)e * PACKED;
  for (uint i = 0; i < L; ++i)
    for (uint j = i; j < L; ++j) r[factored_position(i, j)] = i < rank ? a[packed_position(perm[i], perm[j])] : 0;
  for (uint i = 0; i < L; ++i) factor_indices[(size_t)e * L + i] = indices[(size_t)e * L + perm[i]];
}
