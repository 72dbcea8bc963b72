#pragma once
// ILU2 and IC2 on block CSR (method notes, section 3; Kaporin's second-order incomplete
// factorisation, the preconditioner of Karpenko and Chernov): A + E = L U + L R + W U, with L and
// U the first-order factors that the preconditioner keeps, R and W second-order parts used only
// while factorising, and E = O(tau^2). IC2 is the symmetric form, A + E = U^T D^-1 U + U^T D^-1 R
// + R^T D^-1 U. The factors come out in the layout of ilu_factors.hpp on their own pattern (A's
// with fill), so apply_ilu0 and the device's triangular solves (ops/block_ilu.hpp) apply them.
//
// Dropping, by block norms (Frobenius) of A scaled by its diagonal blocks, s_i = ||A_ii|| (the
// row's largest block norm where A_ii is missing or zero), and by the pivots' sizes
// p_k = ||D_k|| / s_k, so that a threshold tau is dimensionless and the two triangles are
// weighed alike (the balanced factors L D^1/2 and D^-1/2 U):
//   lower block L_ik (= W_ik D_k^-1)   m = ||L_ik|| sqrt(s_k / s_i) sqrt(p_k)
//   upper block U_ij                   m = ||U_ij|| / sqrt(s_i s_j) / sqrt(p_i)
// m >= tau: first order (kept in L or U); tau^2 <= m < tau: second order (W or R); smaller:
// dropped. Block row i is factorised up-looking: its blocks of A in a sparse accumulator; for each
// k < i in increasing order, L_ik is formed and classified, and row i loses L_ik U_kj for U's
// blocks of row k, and L_ik R_kj for R's where L_ik is of first order (never a second-order
// block times another: that is what leaves E of order tau^2); then D_i is inverted
// (invert_block's rule) and the row's upper blocks classified. tau = 0 is the complete LU on A's
// pattern with its fill; a large tau keeps only the diagonal blocks (block Jacobi).
//
// Pivots: D_i fails when invert_block fails or ||D_i|| <= sqrt(eps) s_i (zero, tiny or NaN); that
// is ZeroPivot naming the block row with the remedies, unless tiny pivots are replaced (static
// pivoting, static_pivoting.hpp): then every diagonal entry of D_i gets delta s_i / sqrt(b) added
// with its sign, delta = max(tau, sqrt(eps)) (up to 1000 times more, then of ||D_i|| instead of
// s_i, while D_i stays singular), and the replacement is counted.
//
// Parallel: block row i depends only on its descendants in the elimination tree of A's pattern
// made symmetric (the fill of any factorisation with dropping lies inside that of the complete
// one). Whole subtrees are factorised at once on the host's cores, the rows above them after,
// in order; every row is computed by the same operations whichever thread takes it, so the
// factors have the same bits on any number of threads. With the nested-dissection ordering the
// subdomains are such subtrees; with other orderings there may be little to share (a natural
// ordering of a grid is mostly one chain of rows, factorised on one core).
#include <cstddef>
#include <vector>

#include "ziggurat/matrix/ilu_factors.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::sparse {

/// tau when none is given: GMRES(50) with it converges on every real matrix of the shared set
/// that SciPy's spilu (drop_tol 1e-4, fill_factor 10) solves, within 1.5x its iterations + 5.
constexpr double kDefaultIlu2Threshold = 0.003;

struct Ilu2Options {
  double threshold = kDefaultIlu2Threshold;  ///< tau >= 0, finite
  bool symmetric = false;     ///< IC2: A taken as symmetric, its upper triangle and diagonal read
  double shift = 0;           ///< diagonal shift, as for ILU(0) (ilu_factors.hpp)
  bool replace_tiny_pivots = false;
  std::size_t threads = 0;    ///< host threads; 0: host_threads(). The result does not depend on it
};

template <class T>
struct Ilu2Factors {
  Bsr<T> factors;                 ///< the layout of ilu_factors.hpp, on the pattern with fill
  std::vector<Index> diagonal;    ///< position of block (i, i) in factors.block_col, per block row
  double fill = 0;                ///< factors.blocks() / A's stored blocks
  std::size_t second_order_blocks = 0;  ///< R's and W's blocks (IC2: R's), kept while factorising
  std::size_t replaced_pivots = 0;      ///< tiny pivots replaced (replace_tiny_pivots)
  std::size_t parallel_rows = 0;  ///< block rows factorised in whole subtrees, side by side
};

/// The factorisation described above. InvalidArgument for a non-square matrix, a negative or
/// non-finite threshold or shift; ZeroPivot naming the least block row whose pivot fails (the
/// one a sequential factorisation meets first).
template <class T>
Ilu2Factors<T> factorize_ilu2(const Bsr<T>& a, const Ilu2Options& options = {});

}  // namespace ziggurat::sparse
