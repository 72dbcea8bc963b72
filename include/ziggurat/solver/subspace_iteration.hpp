#pragma once
// The p lowest eigenpairs of K phi = lambda M phi by subspace iteration (Bathe; method notes,
// section 4), with K and M given element by element (matrix/elements.hpp), on a device.
//
// q = min(2p, p + 8) iteration vectors X (at most dofs). Each iteration:
//   1. R = M X                          element by element (ops/ebe.hpp)
//   2. K Y = R for all q vectors        preconditioned CG on K assembled as block CSR, or
//                                       matrix-free on the element operator (CgOperator)
//                                       (solver/krylov.hpp, in chunks of at most 16 vectors),
//                                       once there are Ritz values started from X diag(lambda)^-1
//                                       and deflated by X (KrylovSolver::deflate)
//   3. K+ = Y^T K Y, M+ = Y^T M Y       element by element, reduced in a fixed order
//   4. K+ Q = M+ Q Lambda               on the host (Eigen), Q^T M+ Q = I
//   5. X = Y Q                          on the device (ops/block_products.hpp)
// It stops when every wanted eigenvalue changed by at most `tolerance` relative to its value, or,
// in float, when the largest change has not fallen below its smallest value for
// kStagnationIterations iterations (float's attainable accuracy: a result that did not converge).
// The residual ||K phi - lambda M phi|| / ||K phi|| of each mode is then computed and reported.
// X, Y and R stay on the device throughout; only the q x q matrices cross to the host.
//
// Starting vectors (Bathe): diag(M), unit vectors at the q - 2 DOFs of least k_ii / m_ii, and a
// random vector (fixed seed: the same run gives the same result).
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/elements.hpp"
#include "ziggurat/ops/ebe.hpp"
#include "ziggurat/solver/krylov.hpp"

namespace ziggurat::fem {

struct SubspaceProgress {
  std::size_t iteration = 0;
  double change = 0;                 ///< the largest relative change of a wanted eigenvalue
  std::size_t solve_iterations = 0;  ///< CG iterations of this iteration's solves (the most over chunks)
};

/// How CG applies K. assembled: block CSR (assembled once at setup), any preconditioner.
/// matrix-free: the element-by-element product (ops/ebe.hpp) at every CG iteration, nothing
/// assembled but K's diagonal blocks, for jacobi or block-jacobi (ILU(0) needs K assembled).
enum class CgOperator { assembled, matrix_free };
const char* to_string(CgOperator kind);
/// "assembled" or "matrix-free"; InvalidArgument otherwise.
CgOperator parse_cg_operator(std::string_view text);

struct SubspaceOptions {
  std::size_t modes = 10;            ///< p >= 1
  std::size_t vectors = 0;           ///< q; 0: min(2p, p + 8), at most dofs
  double tolerance = 0;              ///< on the relative change of each wanted eigenvalue; 0: 1e-10 in
                                     ///< double, 1e-4 in float
  std::size_t max_iterations = 100;
  std::size_t block_size = 3;        ///< b of the assembled K (DOFs per node)
  double solve_tolerance = 0;        ///< CG's on ||r|| / ||b||; 0: 1e-10 in double, 1e-5 in float
  sparse::PreconditionerKind preconditioner = sparse::PreconditionerKind::ilu0;  ///< matrix-free: jacobi or block-jacobi
  /// ILU(0)'s ordering (solver/krylov.hpp): colours by default, whose triangular solves take a
  /// few launches where natural order takes one per level (faster per iteration on a GPU).
  sparse::Ordering ordering = sparse::Ordering::colours;
  std::size_t max_solve_iterations = 20000;
  CgOperator cg_operator = CgOperator::assembled;
  /// Deflated CG from the second iteration on: the solves keep their directions K-orthogonal to
  /// the current Ritz vectors X, whose lowest modes otherwise slow CG most. In double only: in
  /// float the projections lose the K-orthogonality deflation rests on and CG stalls, so float
  /// runs without it.
  bool deflation = true;
  EbeOptions ebe;                    ///< how the projections and M X run
  /// Chooses the assembled K's product kernel (SolverOptions::choose_product_kernel); empty: the rule.
  sparse::ProductKernelChooser product_kernel;
  std::function<void(const SubspaceProgress&)> progress;
};

/// Wall seconds per phase, summed over the iterations.
struct SubspaceTimes {
  double setup = 0;       ///< assembly of K, CG set-up (factorisation), element upload, starting vectors
  double mass = 0;        ///< R = M X
  double solve = 0;       ///< K Y = R (wall), with the deflation's set-up; on the device, of which:
  double solve_products = 0, solve_preconditioner = 0, solve_vector_ops = 0, solve_deflation = 0;
  double projection = 0;  ///< Y^T K Y and Y^T M Y
  double small = 0;       ///< the q x q generalised problem
  double update = 0;      ///< X = Y Q
  double residual = 0;    ///< the final residual check
  double total = 0;
};

template <class T>
struct SubspaceResult {
  bool converged = false;
  std::string reason;                 ///< a sentence: why it stopped
  std::size_t iterations = 0;
  std::size_t vectors = 0;            ///< q
  std::vector<double> eigenvalues;    ///< p, ascending
  std::vector<double> frequencies;    ///< Hz: sqrt(lambda) / (2 pi)
  std::vector<double> residuals;      ///< ||K phi - lambda M phi|| / ||K phi|| per mode
  std::vector<double> changes;        ///< the last relative change per mode
  std::vector<T> modes;               ///< dofs x p interleaved, M-orthonormal
  std::size_t solve_iterations = 0;   ///< CG iterations over the whole run (the most over chunks, summed)
  std::string solve_report;           ///< the last CG report's reason when a solve did not converge
  std::string product_kernel;         ///< CG's product kernel, e.g. "multirow/2/v4" ("matrix-free": EBE)
  bool stiffness_factored = false;    ///< K's projection read factored elements (EbeOperator::factored)
  bool mass_factored = false;         ///< M's
  SubspaceTimes times;
};

inline constexpr std::size_t kStagnationIterations = 5;

/// The eigenvalue tolerance a run of T uses: options.tolerance, or its default when that is 0.
template <class T>
double eigenvalue_tolerance(const SubspaceOptions& options) {
  return options.tolerance > 0 ? options.tolerance : (std::is_same_v<T, double> ? 1e-10 : 1e-4);
}

/// q: options.vectors, or min(2p, p + 8) when it is 0; at most dofs.
std::size_t iteration_vectors(const SubspaceOptions& options, std::size_t dofs);

/// Throws InvalidArgument for inconsistent inputs (dofs differ, p = 0 or p > dofs, a singular
/// stiffness: an unconstrained model, or a DOF without stiffness, such as one no element touches,
/// named as such), plus what the parts throw (ops/ebe.hpp,
/// solver/krylov.hpp). Not converging within max_iterations is a result, not an exception.
template <class T>
SubspaceResult<T> subspace_iteration(const Context& context, const ElementSet<T>& stiffness,
                                     const ElementSet<T>& mass, const SubspaceOptions& options);

}  // namespace ziggurat::fem
