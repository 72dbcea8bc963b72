// A part of the element-by-element kernels (ebe.cl includes it): what the tile and column
// layouts share, the padded rows of X_i and Y_i in local memory and the 4 x 4 projection tiles,
// each written to the partial sums that ebe_reduce adds.

#define KP ((K + 3) / 4 * 4)  // row stride of X_i and Y_i in local memory: whole 4-value loads
#define KQ (KP / 4)           // 4-vector columns of a tile
#define PACKED (L * (L + 1) / 2)
#define REAL2 CONCAT(REAL, 2)
#define REAL4 CONCAT(REAL, 4)

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
