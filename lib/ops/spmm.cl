// Sparse products Y = A X for a set of vectors stored interleaved: X is an n x K row-major array
// (element r of vector j at x[r * K + j]). One launch handles the KC vectors j0 .. j0 + KC - 1.
// Host side: lib/ops/spmm.cpp; strategies: method notes, section 3.
//
// A is block CSR with B x B blocks, row-major inside a block (CSR is B = 1). X has at least
// block_cols * B rows and Y block_rows * B rows: the host pads them, so no block reads or writes
// past the end.
//
// Build options: -DREAL (the prologue), -DB, -DK, -DKC, and for the kernels
// that use work-groups -DGROUP (work-items per group, the same as the reqd_work_group_size),
// -DLANES and -DVW (multirow) or -DCHUNK (group). DIA needs only REAL, K and KC.

#ifdef B
#define OUTPUTS (B * KC)  // the (line, vector) pairs of one block row
#endif

// X element: row r (of the padded matrix), vector j of this launch.
#define X_AT(r, j) x[(size_t)(r) * K + j0 + (j)]
#define Y_AT(r, j) y[(size_t)(r) * K + j0 + (j)]

#ifdef B
// Strategy "row" (P11): one work-item per block row, all B * KC sums in registers.
__kernel void bsr_row(__global const uint* restrict row_ptr, __global const uint* restrict col,
                      __global const REAL* restrict values, __global const REAL* restrict x,
                      __global REAL* restrict y, const uint block_rows, const uint j0) {
  const uint br = (uint)get_global_id(0);
  if (br >= block_rows) return;
  REAL acc[OUTPUTS];
  for (uint o = 0; o < OUTPUTS; ++o) acc[o] = 0;
  const uint end = row_ptr[br + 1];
  for (uint p = row_ptr[br]; p < end; ++p) {
    // The B rows of X this block multiplies, loaded once: every loop below has constant bounds,
    // so the compiler can keep both arrays in registers.
    REAL xs[OUTPUTS];
    const size_t first = (size_t)col[p] * B;
    for (uint c = 0; c < B; ++c)
      for (uint j = 0; j < KC; ++j) xs[c * KC + j] = X_AT(first + c, j);
    __global const REAL* block = values + (size_t)p * (B * B);
    for (uint i = 0; i < B; ++i) {
      for (uint c = 0; c < B; ++c) {
        const REAL a = block[i * B + c];
        for (uint j = 0; j < KC; ++j) acc[i * KC + j] += a * xs[c * KC + j];
      }
    }
  }
  for (uint i = 0; i < B; ++i)
    for (uint j = 0; j < KC; ++j) Y_AT((size_t)br * B + i, j) = acc[i * KC + j];
}

#endif

#if defined(B) && defined(LANES)
// Strategy "multirow" (P14): GROUP / (ITEMS * LANES) block rows per work-group. Each work-item
// owns line i of its block row and VW consecutive vectors (VW = 1, or an OpenCL vector width:
// then X and Y move as REALV loads and stores, the prologue's); LANES work-items share such an
// output and take every LANES-th block of the row, their partial sums meeting in local memory.
// Consecutive work-items take consecutive vectors, so reads of X and writes of Y are contiguous,
// and the work-items of one line read the same values of A.
#define ITEMS (B * (KC / VW))  // the work-items of one lane of a block row
// VW vectors from jv * VW on, of row r: aligned, since K, j0 and the group are multiples of VW.
#define XV(r, jv) (*(__global const REALV*)(x + (size_t)(r) * K + j0 + (jv) * VW))

__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void bsr_multirow(__global const uint* restrict row_ptr, __global const uint* restrict col,
                  __global const REAL* restrict values, __global const REAL* restrict x,
                  __global REAL* restrict y, const uint block_rows, const uint j0) {
  const uint t = (uint)get_local_id(0);
  const uint per_row = ITEMS * LANES;
  // Remainders written out (a - q * d): Oclgrind 21.10 cannot check the `freeze` that LLVM
  // puts into a division paired with its remainder by a constant that is not a power of two.
  const uint row = t / per_row, in_row = t - row * per_row;
  const uint br = (uint)get_group_id(0) * (GROUP / per_row) + row;
  const uint lane = in_row / ITEMS, output = in_row - lane * ITEMS;
  const uint i = output / (KC / VW), jv = output - i * (KC / VW);
  const bool active = t < GROUP / per_row * per_row && br < block_rows;
  REALV acc = 0;
  if (active) {
    const uint end = row_ptr[br + 1];
    for (uint p = row_ptr[br] + lane; p < end; p += LANES) {
      __global const REAL* line = values + (size_t)p * (B * B) + i * B;
      const size_t first = (size_t)col[p] * B;
#if B % 4 == 0
      // A line is 4-aligned here (blocks hold B * B values), so it loads four at a time.
      for (uint c = 0; c < B; c += 4) {
        const CONCAT(REAL, 4) a = *(__global const CONCAT(REAL, 4)*)(line + c);
        acc += a.s0 * XV(first + c, jv);
        acc += a.s1 * XV(first + c + 1, jv);
        acc += a.s2 * XV(first + c + 2, jv);
        acc += a.s3 * XV(first + c + 3, jv);
      }
#else
      for (uint c = 0; c < B; ++c) acc += line[c] * XV(first + c, jv);
#endif
    }
  }
#if LANES > 1
  __local REALV partial[GROUP];
  partial[t] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (active && lane == 0) {
    for (uint l = 1; l < LANES; ++l) acc += partial[t + l * ITEMS];
  }
#endif
  if (active && lane == 0) *(__global REALV*)(y + ((size_t)br * B + i) * K + j0 + jv * VW) = acc;
}
#endif

#if defined(B) && defined(CHUNK)
// Strategy "group" (P13): one work-group per block row. The group stages CHUNK blocks of the row
// (and their columns) in local memory, contiguous reads of A, and work-item (q, i, j) multiplies
// line i of staged block q with X; a row longer than CHUNK blocks takes several rounds (the loop
// the paper's P12 lacks, without which long rows come out wrong). The CHUNK partial sums of each
// (i, j) are added up at the end. GROUP = CHUNK * OUTPUTS.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void bsr_group(__global const uint* restrict row_ptr, __global const uint* restrict col,
               __global const REAL* restrict values, __global const REAL* restrict x,
               __global REAL* restrict y, const uint block_rows, const uint j0) {
  __local REAL staged[CHUNK * B * B];
  __local uint staged_col[CHUNK];
  __local REAL partial[GROUP];
  const uint t = (uint)get_local_id(0);
  const uint br = (uint)get_group_id(0);  // the grid has exactly block_rows groups
  const uint q = t / OUTPUTS, output = t - q * OUTPUTS;  // no remainders: see bsr_multirow
  const uint i = output / KC, j = output - i * KC;
  const uint begin = row_ptr[br], end = row_ptr[br + 1];
  REAL acc = 0;
  for (uint p0 = begin; p0 < end; p0 += CHUNK) {  // the same rounds for the whole group
    const uint count = min((uint)CHUNK, end - p0);
    __global const REAL* source = values + (size_t)p0 * (B * B);
    for (uint v = t; v < count * (B * B); v += GROUP) staged[v] = source[v];
    if (t < count) staged_col[t] = col[p0 + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (q < count) {
      __local const REAL* line = staged + q * (B * B) + i * B;
      const size_t first = (size_t)staged_col[q] * B;
      for (uint c = 0; c < B; ++c) acc += line[c] * X_AT(first + c, j);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  partial[t] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (q == 0) {
    for (uint s = 1; s < CHUNK; ++s) acc += partial[t + s * OUTPUTS];
    Y_AT((size_t)br * B + i, j) = acc;
  }
}
#endif

// Diagonal format: work-item (row r, vector j), vectors fastest. Diagonal d holds A(r, r + o) at
// values[d * rows + r]. In the symmetric half-stored form each stored off-diagonal is used a
// second time, as A(r, r - o) = A(r - o, r), read at values[d * rows + r - o].
__kernel void dia(__constant const int* offsets, const uint diagonals,
                  __global const REAL* restrict values, __global const REAL* restrict x,
                  __global REAL* restrict y, const uint rows, const uint cols, const uint symmetric,
                  const uint j0) {
  const size_t id = get_global_id(0);
  const uint r = (uint)(id / KC), j = (uint)(id - (size_t)r * KC);  // no remainder: see bsr_multirow
  if (r >= rows) return;
  REAL acc = 0;
  for (uint d = 0; d < diagonals; ++d) {
    const int o = offsets[d];
    const long c = (long)r + o;
    __global const REAL* diagonal = values + (size_t)d * rows;
    if (c >= 0 && c < cols) acc += diagonal[r] * X_AT(c, j);
    if (symmetric && o > 0 && r >= (uint)o) acc += diagonal[r - o] * X_AT(r - o, j);
  }
  Y_AT(r, j) = acc;
}
