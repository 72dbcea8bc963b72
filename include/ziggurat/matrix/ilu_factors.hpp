#pragma once
// Block ILU(0) factors of a square block CSR matrix: their layout, the preparation of a matrix for
// factorisation (diagonal shift, padding), and the sequential reference of the factorisation and of
// the triangular solves that the device kernels (ops/block_ilu.hpp) are tested against.
//
// Layout: one array with A's pattern. With A = L U, L unit lower and U upper in blocks, D_i the
// diagonal block of U in block row i:
//   block (i, k), k < i:   L_ik                       (the unit diagonal is not stored)
//   block (i, i):          D_i^-1                     (inverted once, by Gauss-Jordan with pivoting)
//   block (i, j), j > i:   D_i^-1 U_ij                (scaled, so the backward solve needs no division)
// The factorisation visits the block rows in any order that respects the lower levels
// (ordering.hpp); inside a row, k goes up: for each stored k < i, a = A_ik, L_ik = a D_k^-1, and
// A_ij -= a (D_k^-1 U_kj) for every j > k stored in both rows; then D_i = A_ii is inverted and the
// row's upper blocks scaled. Sums over the b terms of a block product run in index order.
//
// Pivots: the inversion of D_i fails when a pivot's magnitude is not above b * eps * max |D_i|
// (eps of the value type; zero, tiny and NaN pivots alike). The remedy is a diagonal shift s:
// every diagonal entry a_rr gets s * max_j |a_rj| added before factorising (s = 1e-8 .. 1e-2 is
// usual; it makes the preconditioner approximate a nearby matrix).
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::sparse {

/// A new value of one diagonal entry of A for ILU(0) and block Jacobi: line `line` of the diagonal
/// block of block row `block_row`.
template <class T>
struct DiagonalChange {
  std::size_t block_row = 0, line = 0;
  T value = 0;
};

/// What ILU(0) and block Jacobi need besides A's own values: the position of each block row's
/// diagonal block, and the diagonal entries they see changed. With a shift, every diagonal entry;
/// where the last block is padded, the padded lines' diagonal gets the block's largest diagonal
/// magnitude (so the padding factors as a decoupled diagonal and stays zero in every solve). A is
/// never copied for this: the device applies the changes to its own copy of the values.
template <class T>
struct IluPattern {
  std::vector<Index> diagonal;  ///< position in block_col of block (i, i), per block row
  std::vector<DiagonalChange<T>> changes;
  /// Where in A's values (b x b blocks) the entry `change` sets lies.
  std::size_t position(const DiagonalChange<T>& change, std::size_t b) const {
    return std::size_t{diagonal[change.block_row]} * b * b + change.line * (b + 1);
  }
};

/// InvalidArgument when a is not square or a block row has no diagonal block (naming the row: ILU(0)
/// needs every diagonal block stored), or when shift is negative or not finite.
template <class T>
IluPattern<T> ilu_pattern(const Bsr<T>& a, double shift = 0);
/// The same for a matrix that has passed validate() (its other checks stay).
template <class T>
IluPattern<T> ilu_pattern(const Bsr<T>& a, double shift, Validated);

/// A matrix made ready for the reference factorisation: a copy of A with its pattern's changes
/// applied, and the positions of the diagonal blocks.
template <class T>
struct IluInput {
  Bsr<T> matrix;
  std::vector<Index> diagonal;  ///< position in block_col of block (i, i), per block row
};

/// ilu_pattern's checks, then the copy.
template <class T>
IluInput<T> prepare_ilu(const Bsr<T>& a, double shift = 0);

/// The message of a failed pivot in block row `row`, with the remedy; `pivot` is the failing
/// magnitude (NaN allowed; negative when unknown); `factorization` names it ("ILU(0)", "ILU2").
std::string pivot_failure_message(std::size_t row, double pivot, double shift, const char* factorization = "ILU(0)");

/// Inverts the b x b row-major block `d` in place by Gauss-Jordan with partial pivoting; returns
/// false (d then undefined) when a pivot fails the rule above, with its magnitude in `pivot`.
template <class T>
bool invert_block(T* d, std::size_t b, double* pivot = nullptr);

/// The reference factorisation, row by row in natural order; throws ZeroPivot (error.hpp) naming
/// the first failing block row. Returns the factors in the layout above.
template <class T>
Bsr<T> factorize_ilu0(const IluInput<T>& input, double shift = 0);

/// z = U^-1 L^-1 r for k interleaved vectors (r and z block_rows * b x k, padded): forward then
/// backward substitution with the factors, sums in storage order.
template <class T>
std::vector<T> apply_ilu0(const Bsr<T>& factors, const std::vector<Index>& diagonal, const std::vector<T>& r,
                          std::size_t k = 1);

}  // namespace ziggurat::sparse
