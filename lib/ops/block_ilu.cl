// Block ILU(0) on the device: the factorisation level by level, the triangular solves level by
// level, sync-free, sequential or approximately by Jacobi sweeps, and block Jacobi (inverted
// diagonal blocks). The factor layout and the order of every sum are those of the sequential
// reference, lib/matrix/ilu_factors.cpp; the host side is lib/ops/block_ilu.cpp.
//
// Build options: -DREAL (the prologue), -DB (block size) and -DK (interleaved vectors, for the
// solves). Every kernel that works on a level gets the level's rows as level_rows[first ..
// first + count); rows of one level never depend on each other, and only the sync-free sweeps
// (below) have barriers. The sequential kernels walk every row themselves (the factorisation in
// one work-item, the sweeps in one work-item a vector).
// `status` holds the least failing block row of the first level that failed (UINT_MAX: none);
// once it is set, later levels do nothing. The sequential factorisation stops at the first
// singular block in row order instead, and the host then lets the levels name the row.

#define BB (B * B)
#define NO_FAILURE 0xffffffffu

// Gauss-Jordan with partial pivoting on the B x B block d (private), the inverse left in inv.
// Returns 0 when a pivot's magnitude is not above B * eps * max |d| (zero, tiny or NaN).
int invert_block(REAL* d, REAL* inv) {
  REAL largest = 0;
  for (uint e = 0; e < BB; ++e) largest = fmax(largest, fabs(d[e]));
#ifdef REAL_IS_DOUBLE
  const REAL tiny = (REAL)B * DBL_EPSILON * largest;
#else
  const REAL tiny = (REAL)B * FLT_EPSILON * largest;
#endif
  for (uint r = 0; r < B; ++r)
    for (uint c = 0; c < B; ++c) inv[r * B + c] = r == c ? (REAL)1 : (REAL)0;
  for (uint c = 0; c < B; ++c) {
    uint best = c;
    for (uint r = c + 1; r < B; ++r)
      if (fabs(d[r * B + c]) > fabs(d[best * B + c])) best = r;
    const REAL p = d[best * B + c];
    if (!(fabs(p) > tiny)) return 0;
    for (uint e = 0; e < B; ++e) {
      const REAL t = d[c * B + e];
      d[c * B + e] = d[best * B + e];
      d[best * B + e] = t;
      const REAL u = inv[c * B + e];
      inv[c * B + e] = inv[best * B + e];
      inv[best * B + e] = u;
    }
    const REAL scale = (REAL)1 / p;
    for (uint e = 0; e < B; ++e) {
      d[c * B + e] *= scale;
      inv[c * B + e] *= scale;
    }
    for (uint r = 0; r < B; ++r) {
      if (r == c) continue;
      const REAL f = d[r * B + c];
      for (uint e = 0; e < B; ++e) {
        d[r * B + e] -= f * d[c * B + e];
        inv[r * B + e] -= f * inv[c * B + e];
      }
    }
  }
  return 1;
}

// The next pair of row k's upper blocks and row i's blocks in one column: q moves on from the last
// pair along row k (up to kend), r along row i (up to end); false when none is left. Both rows'
// columns increase, so one merge walk finds every pair.
bool next_shared_column(__global const uint* restrict col, uint* q, const uint kend, uint* r, const uint end) {
  for (++*q; *q < kend; ++*q) {
    const uint j = col[*q];
    while (*r < end && col[*r] < j) ++*r;
    if (*r == end) return false;
    if (col[*r] == j) return true;
  }
  return false;
}

// Line l of every block of block row i eliminated (the lines of a block row are independent until
// the diagonal block is inverted); the rows it reads are factorised.
void eliminate_line(__global const uint* restrict row_ptr, __global const uint* restrict col,
                    __global const uint* restrict diag, __global REAL* restrict values, const uint i, const uint l) {
  const uint end = row_ptr[i + 1];
  REAL a[B];
  for (uint p = row_ptr[i]; p < diag[i]; ++p) {
    const uint k = col[p];
    __global REAL* line = values + (size_t)p * BB + l * B;
    for (uint c = 0; c < B; ++c) a[c] = line[c];
    __global const REAL* dk = values + (size_t)diag[k] * BB;
    for (uint c = 0; c < B; ++c) {
      REAL s = 0;
      for (uint e = 0; e < B; ++e) s += a[e] * dk[e * B + c];
      line[c] = s;
    }
    uint q = diag[k], r = p + 1;
    while (next_shared_column(col, &q, row_ptr[k + 1], &r, end)) {
      __global REAL* target = values + (size_t)r * BB + l * B;
      __global const REAL* u = values + (size_t)q * BB;
      for (uint c = 0; c < B; ++c) {
        REAL s = target[c];
        for (uint e = 0; e < B; ++e) s -= a[e] * u[e * B + c];
        target[c] = s;
      }
    }
  }
}

// Every line of block row i eliminated in one work-item (the sequential factorisation): each line
// by eliminate_line's arithmetic, in its order, with each pair of blocks matched once for all lines.
void eliminate_row(__global const uint* restrict row_ptr, __global const uint* restrict col,
                   __global const uint* restrict diag, __global REAL* restrict values, const uint i) {
  const uint end = row_ptr[i + 1];
  REAL a[BB];
  for (uint p = row_ptr[i]; p < diag[i]; ++p) {
    const uint k = col[p];
    __global REAL* block = values + (size_t)p * BB;
    for (uint e = 0; e < BB; ++e) a[e] = block[e];
    __global const REAL* dk = values + (size_t)diag[k] * BB;
    for (uint l = 0; l < B; ++l) {
      for (uint c = 0; c < B; ++c) {
        REAL s = 0;
        for (uint e = 0; e < B; ++e) s += a[l * B + e] * dk[e * B + c];
        block[l * B + c] = s;
      }
    }
    uint q = diag[k], r = p + 1;
    while (next_shared_column(col, &q, row_ptr[k + 1], &r, end)) {
      __global REAL* target = values + (size_t)r * BB;
      __global const REAL* u = values + (size_t)q * BB;
      for (uint l = 0; l < B; ++l) {
        for (uint c = 0; c < B; ++c) {
          REAL s = target[l * B + c];
          for (uint e = 0; e < B; ++e) s -= a[l * B + e] * u[e * B + c];
          target[l * B + c] = s;
        }
      }
    }
  }
}

// Block row i's diagonal block inverted and its upper blocks scaled by the inverse, once its lines
// are eliminated. Returns 0, changing nothing, when the block is singular.
int invert_row(__global const uint* restrict row_ptr, __global const uint* restrict diag,
               __global REAL* restrict values, const uint i) {
  REAL d[BB], inv[BB];
  __global REAL* block = values + (size_t)diag[i] * BB;
  for (uint e = 0; e < BB; ++e) d[e] = block[e];
  if (!invert_block(d, inv)) return 0;
  for (uint e = 0; e < BB; ++e) block[e] = inv[e];
  const uint end = row_ptr[i + 1];
  for (uint q = diag[i] + 1; q < end; ++q) {
    __global REAL* u = values + (size_t)q * BB;
    for (uint e = 0; e < BB; ++e) d[e] = u[e];  // the block, read whole before it is written
    for (uint r = 0; r < B; ++r) {
      for (uint c = 0; c < B; ++c) {
        REAL s = 0;
        for (uint e = 0; e < B; ++e) s += inv[r * B + e] * d[e * B + c];
        u[r * B + c] = s;
      }
    }
  }
  return 1;
}

// Elimination of one level: work-item (row of the level, line l).
__kernel void ilu_eliminate(__global const uint* restrict row_ptr, __global const uint* restrict col,
                            __global const uint* restrict diag, __global REAL* restrict values,
                            __global const uint* restrict level_rows, const uint first, const uint count,
                            __global const uint* restrict status) {
  const uint t = (uint)get_global_id(0);
  const uint slot = t / B, l = t - slot * B;
  if (slot >= count || *status != NO_FAILURE) return;
  eliminate_line(row_ptr, col, diag, values, level_rows[first + slot], l);
}

// The diagonal blocks of one level inverted, and each row's upper blocks scaled by the inverse:
// one work-item per block row.
__kernel void ilu_invert(__global const uint* restrict row_ptr, __global const uint* restrict diag,
                         __global REAL* restrict values, __global const uint* restrict level_rows,
                         const uint first, const uint count, __global uint* restrict status) {
  const uint slot = (uint)get_global_id(0);
  if (slot >= count || *status != NO_FAILURE) return;
  const uint i = level_rows[first + slot];
  if (!invert_row(row_ptr, diag, values, i)) atomic_min(status, i);
}

// The whole factorisation in one work-item, row after row in the numbering's order (CPU devices,
// as the sequential sweeps below): every row's lower blocks are earlier rows, so each row finds
// its dependencies factorised, and its sums run as in the level-scheduled kernels. It stops at the
// first singular block, whose row is the status; the host then names the row as the levels do.
__kernel void ilu_factor_sequential(__global const uint* restrict row_ptr, __global const uint* restrict col,
                                    __global const uint* restrict diag, __global REAL* restrict values,
                                    const uint rows, __global uint* restrict status) {
  for (uint i = 0; i < rows; ++i) {
    eliminate_row(row_ptr, col, diag, values, i);
    if (!invert_row(row_ptr, diag, values, i)) {
      *status = i;
      return;
    }
  }
}

// values[at[t]] = to[t]: the diagonal changes of the ILU pattern (padding, shift).
__kernel void scatter(__global REAL* restrict values, __global const ulong* restrict at, __global const REAL* restrict to,
                      const uint count) {
  const uint t = (uint)get_global_id(0);
  if (t < count) values[at[t]] = to[t];
}

// Block Jacobi's setup: the diagonal blocks (stored one after another) inverted in place, one
// work-item per block row; a failure records the least failing row.
__kernel void invert_diagonal(__global REAL* restrict blocks, const uint block_rows, __global uint* restrict status) {
  const uint i = (uint)get_global_id(0);
  if (i >= block_rows) return;
  REAL d[BB], inv[BB];
  __global REAL* block = blocks + (size_t)i * BB;
  for (uint e = 0; e < BB; ++e) d[e] = block[e];
  if (!invert_block(d, inv)) {
    atomic_min(status, i);
    return;
  }
  for (uint e = 0; e < BB; ++e) block[e] = inv[e];
}

#ifdef K
// Vector element: scalar row e of block row i ... (row-major over K interleaved vectors).
#define AT(v, row, j) v[(size_t)(row) * K + (j)]

// Line l, vector j, of block row i of y = L^-1 r, the rows it depends on solved: the level
// kernels and the sequential ones share it, so their sums run in one order.
REAL lower_row(__global const uint* restrict row_ptr, __global const uint* restrict col,
               __global const uint* restrict diag, __global const REAL* restrict values, __global const REAL* r,
               __global const REAL* y, const uint i, const uint l, const uint j) {
  REAL acc = AT(r, i * B + l, j);
  for (uint p = row_ptr[i]; p < diag[i]; ++p) {
    __global const REAL* line = values + (size_t)p * BB + l * B;
    const uint c0 = col[p] * B;
    for (uint c = 0; c < B; ++c) acc -= line[c] * AT(y, c0 + c, j);
  }
  return acc;
}

// The same of z = U^-1 y, with the inverted diagonal blocks and the scaled upper blocks:
// z_i = D_i^-1 y_i - sum_j (D_i^-1 U_ij) z_j; upper_diagonal is its first term.
// (No restrict: Oclgrind 21.10 cannot run the scope declarations its inlining then leaves.)
REAL upper_diagonal(__global const uint* diag, __global const REAL* values, __global const REAL* y, const uint i,
                    const uint l, const uint j) {
  __global const REAL* dline = values + (size_t)diag[i] * BB + l * B;
  REAL acc = 0;
  for (uint c = 0; c < B; ++c) acc += dline[c] * AT(y, i * B + c, j);
  return acc;
}

REAL upper_row(__global const uint* restrict row_ptr, __global const uint* restrict col,
               __global const uint* restrict diag, __global const REAL* restrict values, __global const REAL* y,
               __global const REAL* z, const uint i, const uint l, const uint j) {
  REAL acc = upper_diagonal(diag, values, y, i, l, j);
  const uint end = row_ptr[i + 1];
  for (uint q = diag[i] + 1; q < end; ++q) {
    __global const REAL* line = values + (size_t)q * BB + l * B;
    const uint c0 = col[q] * B;
    for (uint c = 0; c < B; ++c) acc -= line[c] * AT(z, c0 + c, j);
  }
  return acc;
}

// Forward substitution y = L^-1 r on one level: work-item (row of the level, line l, vector j).
__kernel void lower_solve(__global const uint* restrict row_ptr, __global const uint* restrict col,
                          __global const uint* restrict diag, __global const REAL* restrict values,
                          __global const uint* restrict level_rows, const uint first, const uint count,
                          __global const REAL* restrict r, const ulong r_offset, __global REAL* restrict y) {
  const uint t = (uint)get_global_id(0);
  const uint slot = t / (B * K), in_row = t - slot * (B * K);
  if (slot >= count) return;
  const uint l = in_row / K, j = in_row - l * K;
  const uint i = level_rows[first + slot];
  AT(y, i * B + l, j) = lower_row(row_ptr, col, diag, values, r + r_offset, y, i, l, j);
}

// Backward substitution z = U^-1 y on one level (upper_row).
__kernel void upper_solve(__global const uint* restrict row_ptr, __global const uint* restrict col,
                          __global const uint* restrict diag, __global const REAL* restrict values,
                          __global const uint* restrict level_rows, const uint first, const uint count,
                          __global const REAL* restrict y, __global REAL* restrict z, const ulong z_offset) {
  const uint t = (uint)get_global_id(0);
  const uint slot = t / (B * K), in_row = t - slot * (B * K);
  if (slot >= count) return;
  const uint l = in_row / K, j = in_row - l * K;
  const uint i = level_rows[first + slot];
  z += z_offset;
  AT(z, i * B + l, j) = upper_row(row_ptr, col, diag, values, y, z, i, l, j);
}

// ---- Sync-free sweeps: one launch per triangular solve, whatever the number of levels ----
//
// The host cuts every level into chunks of at most ROWS block rows (chunk_ptr into level_rows);
// one work-group of ROWS x B x K work-items solves a chunk (work-item: row of the chunk, line l,
// vector j), so the rows of a group never depend on each other. Groups take their chunks in level
// order by a ticket (tickets[0], incremented atomically). tickets[1] counts the chunks finished;
// a chunk waits until it reaches level_chunk[chunk], the number of chunks of the earlier levels.
// A chunk finishes only after the earlier levels all have, so the count reaches that number only
// once they are all done; the chunks it waits for hold earlier tickets, so their groups have
// started and run to the end (no group waits for one that may not have started). One work-item
// of a group polls one counter: a row's own dependencies, polled row by row, cost more in polls
// that load the memory system than they save in waiting. Values are written and fenced before
// the count, and read through volatile pointers after it (no stale cache lines). The last group
// to finish resets the tickets for the next launch. Every sum runs in the order of the
// level-scheduled kernels: the same bits.

// `slot`: a __local uint of the kernel (OpenCL 1.2 declares local memory at kernel scope only).
uint take_ticket(volatile __global uint* tickets, __local uint* slot) {
  if (get_local_id(0) == 0) *slot = atomic_inc(&tickets[0]);
  barrier(CLK_LOCAL_MEM_FENCE);
  return *slot;
}

// Until the chunks of the earlier levels (`earlier` of them) have finished (uniform control flow:
// every work-item calls it).
void wait_for_levels(volatile __global uint* tickets, const uint earlier) {
  if (get_local_id(0) == 0) {
    while (tickets[1] < earlier) {
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  read_mem_fence(CLK_GLOBAL_MEM_FENCE);
}

// The first PRELOAD entries of a row's range [begin, end): their block columns and the line l of
// their blocks, loaded before the wait, which only the values they multiply need to follow; the
// wait's path then holds one load instead of three.
#define PRELOAD 4
typedef struct {
  uint col[PRELOAD];
  REAL line[PRELOAD][B];
} Preloaded;

Preloaded preload(__global const uint* restrict col, __global const REAL* restrict values, const uint begin,
                  const uint end, const uint l) {
  Preloaded pre;
#pragma unroll
  for (uint q = 0; q < PRELOAD; ++q) {
    const bool in_row = begin + q < end;
    pre.col[q] = in_row ? col[begin + q] : 0;
#pragma unroll
    for (uint e = 0; e < B; ++e) pre.line[q][e] = in_row ? values[(size_t)(begin + q) * BB + l * B + e] : (REAL)0;
  }
  return pre;
}

// acc minus the entries [begin, end) of line l times x (vector j), in order: the first PRELOAD from
// `pre`, the rest loaded here.
REAL subtract_row(REAL acc, const Preloaded* pre, __global const uint* restrict col,
                  __global const REAL* restrict values, const uint begin, const uint end, const uint l, const uint j,
                  volatile __global const REAL* x) {
#pragma unroll
  for (uint q = 0; q < PRELOAD; ++q) {
    if (begin + q < end) {
      for (uint e = 0; e < B; ++e) acc -= pre->line[q][e] * AT(x, pre->col[q] * B + e, j);
    }
  }
  for (uint p = begin + PRELOAD; p < end; ++p) {
    const uint k = col[p];
    __global const REAL* line = values + (size_t)p * BB + l * B;
    for (uint e = 0; e < B; ++e) acc -= line[e] * AT(x, k * B + e, j);
  }
  return acc;
}

// After every work-item of the group has stored its value (uniform control flow: all call it).
void publish(volatile __global uint* tickets, const uint chunks) {
  write_mem_fence(CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (get_local_id(0) == 0 && atomic_inc(&tickets[1]) == chunks - 1) {
    tickets[0] = 0;
    tickets[1] = 0;
  }
}

// y = L^-1 r, chunk by chunk in the lower levels' order.
__kernel void lower_solve_sync_free(__global const uint* restrict row_ptr, __global const uint* restrict col,
                                    __global const uint* restrict diag, __global const REAL* restrict values,
                                    __global const uint* restrict level_rows, __global const uint* restrict chunk_ptr,
                                    __global const uint* restrict level_chunk, const uint chunks,
                                    __global const REAL* restrict r, const ulong r_offset, volatile __global REAL* y,
                                    volatile __global uint* tickets) {
  __local uint ticket;
  const uint c = take_ticket(tickets, &ticket);
  const uint first = chunk_ptr[c], count = chunk_ptr[c + 1] - first;
  const uint t = (uint)get_local_id(0), slot = t / (B * K), in_row = t - slot * (B * K);
  const uint l = in_row / K, j = in_row - l * K;
  const bool mine = slot < count;
  const uint i = mine ? level_rows[first + slot] : 0;
  const uint begin = mine ? row_ptr[i] : 0, end = mine ? diag[i] : 0;
  r += r_offset;
  const REAL own = mine ? AT(r, i * B + l, j) : (REAL)0;  // needs nothing of other rows: before the wait
  const Preloaded pre = preload(col, values, begin, end, l);
  wait_for_levels(tickets, level_chunk[c]);
  if (mine) AT(y, i * B + l, j) = subtract_row(own, &pre, col, values, begin, end, l, j, y);
  publish(tickets, chunks);
}

// z = U^-1 y, chunk by chunk in the upper levels' order.
__kernel void upper_solve_sync_free(__global const uint* restrict row_ptr, __global const uint* restrict col,
                                    __global const uint* restrict diag, __global const REAL* restrict values,
                                    __global const uint* restrict level_rows, __global const uint* restrict chunk_ptr,
                                    __global const uint* restrict level_chunk, const uint chunks,
                                    __global const REAL* restrict y, volatile __global REAL* z, const ulong z_offset,
                                    volatile __global uint* tickets) {
  __local uint ticket;
  const uint c = take_ticket(tickets, &ticket);
  const uint first = chunk_ptr[c], count = chunk_ptr[c + 1] - first;
  const uint t = (uint)get_local_id(0), slot = t / (B * K), in_row = t - slot * (B * K);
  const uint l = in_row / K, j = in_row - l * K;
  const bool mine = slot < count;
  const uint i = mine ? level_rows[first + slot] : 0;
  const uint begin = mine ? diag[i] + 1 : 0, end = mine ? row_ptr[i + 1] : 0;
  REAL own = 0;
  if (mine) {  // D_i^-1 y_i needs nothing of other rows: before the wait
    __global const REAL* dline = values + (size_t)diag[i] * BB + l * B;
    for (uint e = 0; e < B; ++e) own += dline[e] * AT(y, i * B + e, j);
  }
  const Preloaded pre = preload(col, values, begin, end, l);
  wait_for_levels(tickets, level_chunk[c]);
  z += z_offset;
  if (mine) AT(z, i * B + l, j) = subtract_row(own, &pre, col, values, begin, end, l, j, z);
  publish(tickets, chunks);
}

// ---- Sequential sweeps: one work-item walks every row (CPU devices) ----
//
// A CPU device runs a few work-groups at a time: a launch a level, or a work-group's wait, costs
// more there than the rows it solves. One work-item a vector (work-groups of one, vector j = its
// id: the vectors never depend on each other) walks the rows in their own order instead (an L
// entry lies left of its row, a U entry right of it), without level sets or waits. Every sum runs
// in the order of the level-scheduled kernels (lower_row, upper_row): the same bits.

// y = L^-1 r for vector j, rows 0 to block_rows - 1.
__kernel void lower_solve_sequential(__global const uint* restrict row_ptr, __global const uint* restrict col,
                                     __global const uint* restrict diag, __global const REAL* restrict values,
                                     const uint block_rows, __global const REAL* restrict r, const ulong r_offset,
                                     __global REAL* restrict y) {
  const uint j = (uint)get_global_id(0);
  r += r_offset;
  for (uint i = 0; i < block_rows; ++i)
    for (uint l = 0; l < B; ++l) AT(y, i * B + l, j) = lower_row(row_ptr, col, diag, values, r, y, i, l, j);
}

// z = U^-1 y for vector j, rows block_rows - 1 down to 0.
__kernel void upper_solve_sequential(__global const uint* restrict row_ptr, __global const uint* restrict col,
                                     __global const uint* restrict diag, __global const REAL* restrict values,
                                     const uint block_rows, __global const REAL* restrict y, __global REAL* restrict z,
                                     const ulong z_offset) {
  const uint j = (uint)get_global_id(0);
  z += z_offset;
  for (uint i = block_rows; i-- > 0;)
    for (uint l = 0; l < B; ++l) AT(z, i * B + l, j) = upper_row(row_ptr, col, diag, values, y, z, i, l, j);
}

// The (block row, line, vector) of this work-item in a launch over every block row (rows past
// the last for the work-items of the launch's rounding up).
uint3 row_line_vector(void) {
  const uint t = (uint)get_global_id(0);
  const uint i = t / (B * K), in_row = t - i * (B * K);
  return (uint3)(i, in_row / K, in_row % K);
}

// ---- Jacobi sweeps: every row at once from the last iterate (approximate solves) ----
//
// y = L^-1 r is approximated by y_0 = r and y_s+1 = r - (L - I) y_s, z = U^-1 y by z_0 = D^-1 y and
// z_s+1 = D^-1 y - D^-1 (U - D) z_s: one launch a sweep, work-item (block row, line, vector), each
// row's sum that of lower_row / upper_row. A row of level m is exact from sweep m on, so sweeps as
// many as the levels less one give the level sweeps' bits; fewer give an approximate solve.
// The sweeps read the factors split in two (split_factors): each row's lower blocks, then each
// row's diagonal and upper blocks, so that neither sweep loads the other's blocks.

// Block row i's blocks to the lower part (before its diagonal) or the upper part (from it on):
// lower_ptr[i] and upper_ptr[i] (= row_ptr[i] - lower_ptr[i]) are where its blocks go.
__kernel void split_factors(__global const uint* restrict row_ptr, __global const uint* restrict col,
                            __global const uint* restrict diag, __global const REAL* restrict values,
                            const uint block_rows, __global const uint* restrict lower_ptr,
                            __global const uint* restrict upper_ptr, __global uint* restrict lower_col,
                            __global REAL* restrict lower_values, __global uint* restrict upper_col,
                            __global REAL* restrict upper_values) {
  const uint i = (uint)get_global_id(0);
  if (i >= block_rows) return;
  const uint begin = row_ptr[i], d = diag[i], end = row_ptr[i + 1];
  for (uint p = begin; p < end; ++p) {
    const uint to = p < d ? lower_ptr[i] + (p - begin) : upper_ptr[i] + (p - d);
    __global uint* to_col = p < d ? lower_col : upper_col;
    __global REAL* to_values = p < d ? lower_values : upper_values;
    to_col[to] = col[p];
    for (uint e = 0; e < BB; ++e) to_values[(size_t)to * BB + e] = values[(size_t)p * BB + e];
  }
}

// Each triangle's contraction, the largest sum of |entries| of a scalar row of L - I (most[0]) and
// of D^-1 (U - D) (most[1]), as float bits (atomic_max keeps their order for numbers >= 0):
// work-item (block row i, line l).
__kernel void factor_contraction(__global const uint* restrict row_ptr, __global const uint* restrict diag,
                                 __global const REAL* restrict values, const uint block_rows,
                                 volatile __global uint* most) {
  const uint t = (uint)get_global_id(0), i = t / B, l = t - i * B;
  if (i >= block_rows) return;
  REAL lower = 0, upper = 0;
  for (uint p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
    if (p == diag[i]) continue;
    REAL sum = 0;
    for (uint c = 0; c < B; ++c) sum += fabs(values[(size_t)p * BB + l * B + c]);
    if (p < diag[i]) lower += sum;
    else upper += sum;
  }
  atomic_max(&most[0], as_uint((float)lower));
  atomic_max(&most[1], as_uint((float)upper));
}

// One sweep of the forward solve: y_new from y_old (the lower part: row i's blocks end where
// row i + 1's begin, lower_ptr + 1 serving as lower_row's diagonal positions).
__kernel void lower_jacobi(__global const uint* restrict lower_ptr, __global const uint* restrict lower_col,
                           __global const REAL* restrict lower_values, const uint block_rows,
                           __global const REAL* restrict r, const ulong r_offset, __global const REAL* restrict y_old,
                           const ulong old_offset, __global REAL* restrict y_new) {
  const uint3 item = row_line_vector();
  const uint i = item.x, l = item.y, j = item.z;
  if (i >= block_rows) return;
  AT(y_new, i * B + l, j) =
      lower_row(lower_ptr, lower_col, lower_ptr + 1, lower_values, r + r_offset, y_old + old_offset, i, l, j);
}

// z_0 = D^-1 y, the backward solve's first iterate (the upper part: row i's diagonal block first).
__kernel void upper_jacobi_start(__global const uint* restrict upper_ptr, __global const REAL* restrict upper_values,
                                 const uint block_rows, __global const REAL* restrict y, __global REAL* restrict z,
                                 const ulong z_offset) {
  const uint3 item = row_line_vector();
  const uint i = item.x, l = item.y, j = item.z;
  if (i >= block_rows) return;
  z += z_offset;
  AT(z, i * B + l, j) = upper_diagonal(upper_ptr, upper_values, y, i, l, j);
}

// One sweep of the backward solve: z_new from z_old (upper_ptr serving as upper_row's row
// pointers and diagonal positions both).
__kernel void upper_jacobi(__global const uint* upper_ptr, __global const uint* restrict upper_col,
                           __global const REAL* restrict upper_values, const uint block_rows,
                           __global const REAL* restrict y, __global const REAL* restrict z_old,
                           const ulong old_offset, __global REAL* restrict z_new, const ulong new_offset) {
  const uint3 item = row_line_vector();
  const uint i = item.x, l = item.y, j = item.z;
  if (i >= block_rows) return;
  z_new += new_offset;
  AT(z_new, i * B + l, j) = upper_row(upper_ptr, upper_col, upper_ptr, upper_values, y, z_old + old_offset, i, l, j);
}

// Block Jacobi: z_i = D_i^-1 r_i for every block row; work-item (block row, line, vector).
__kernel void block_jacobi(__global const REAL* restrict dinv, const uint block_rows, __global const REAL* restrict r,
                           const ulong r_offset, __global REAL* restrict z, const ulong z_offset) {
  const uint3 item = row_line_vector();
  const uint i = item.x, l = item.y, j = item.z;
  if (i >= block_rows) return;
  r += r_offset;
  z += z_offset;
  __global const REAL* dline = dinv + (size_t)i * BB + l * B;
  REAL acc = 0;
  for (uint c = 0; c < B; ++c) acc += dline[c] * AT(r, i * B + c, j);
  AT(z, i * B + l, j) = acc;
}
#endif
