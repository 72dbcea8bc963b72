#pragma once
// Static pivoting (SuperLU_DIST's) for factorisations without dynamic pivoting (ILU2, ilu2.hpp):
// the block rows permuted once so that large blocks lie on the diagonal, and tiny pivots replaced
// instead of failing. Systems with zero or missing diagonal blocks (circuit, chemical-engineering
// and LP matrices) need it: ILU(0) cannot even start on them.
#include <string_view>

#include "ziggurat/matrix/ordering.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::sparse {

/// Static pivoting (SuperLU_DIST's, its default): a row permutation that puts large blocks on the
/// diagonal (diagonal_matching; the identity where the diagonal blocks are already the largest,
/// then nothing is permuted), and tiny pivots replaced instead of failing.
enum class StaticPivoting {
  automatic,  ///< on for the nonsymmetric ILU2 (bicgstab, gmres), off for IC2 (cg)
  on,         ///< rows matched, tiny pivots replaced (nonsymmetric methods only)
  off,        ///< neither: a tiny pivot is ZeroPivot
};
const char* to_string(StaticPivoting pivoting);
/// "auto", "on" or "off"; InvalidArgument otherwise.
StaticPivoting parse_static_pivoting(std::string_view text);

/// The block row permutation of static pivoting: new block row r is the old block row matched to
/// block column r in a matching that maximises the product of the diagonal blocks' norms (MC64's
/// criterion on the block norms: shortest augmenting paths on the costs log(max_k ||A_kj||) -
/// log ||A_ij||). A padded last block row stays last; the identity comes back empty. InvalidArgument
/// when A is structurally singular (no such matching: then A is singular whatever its values).
template <class T>
Permutation diagonal_matching(const Bsr<T>& a);
/// True where a diagonal block of A is missing or singular (invert_block's rule): where ILU(0)
/// cannot start, and where only a matching of the rows gives ILU2 its pivots.
template <class T>
bool needs_matching(const Bsr<T>& a);
/// P A: block rows renumbered (new block row r is old block row rows.old_of_new[r]), block
/// columns kept.
template <class T>
Bsr<T> permute_block_rows(const Bsr<T>& a, const Permutation& rows);

/// Static pivoting's rows of a block CSR matrix, and the matrix they make.
template <class T>
struct MatchedRows {
  Permutation rows;       ///< empty: A's own rows are kept (the matching is the identity)
  std::size_t block = 1;  ///< rows.old_of_new numbers blocks of this many rows: b, or 1 (single rows)
  Bsr<T> matrix;          ///< P A in blocks of b (nothing when rows is empty)
};
/// The block rows matched (diagonal_matching); where that leaves a diagonal block singular (zeros
/// inside the blocks: a scalar matrix cut into blocks), the single rows matched instead, on A's
/// entries, the padding rows kept last, and P A cut into blocks of b again (its pattern may then
/// hold more blocks than A's).
template <class T>
MatchedRows<T> match_rows(const Bsr<T>& a);

}  // namespace ziggurat::sparse
