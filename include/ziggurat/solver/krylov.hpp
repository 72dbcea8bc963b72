#pragma once
// Preconditioned Krylov solvers on a device for A X = B with A in block CSR (CSR is b = 1), or
// matrix-free (ops/linear_operator.hpp: e.g. element by element), and k right-hand sides stored
// interleaved (method notes, section 3).
//
// Methods:
//   cg        conjugate gradients, A symmetric positive definite; preconditioned CG (M applied to
//             the residual; the residual r = b - A x is the unpreconditioned one)
//   bicgstab  BiCGStab, right-preconditioned (A M^-1 u = b, x = M^-1 u): the residual it updates
//             is the true residual's recurrence, unscaled by M
//   gmres     restarted GMRES(m), right-preconditioned, classical Gram-Schmidt with one
//             re-orthogonalisation (CGS2: two passes, each one multi-dot and one combination);
//             one right-hand side at a time
// Preconditioners: none, jacobi (1 / diagonal entries), block-jacobi (inverted diagonal blocks),
// ilu0 (block ILU(0), factorised on the device; ordering natural, levels, colours, block-colours
// or nested-dissection; triangular solves level by level, sync-free or sequential, ops/block_ilu.hpp), ilu2
// (block ILU2 with threshold tau, factorised on the host, in parallel over the subdomains of the
// nested-dissection ordering, matrix/ilu2.hpp; the same orderings and device triangular solves;
// with cg it is IC2, the symmetric form, automatically; with bicgstab and gmres, static pivoting
// by default: rows matched to large diagonal blocks, tiny pivots replaced).
//
// With k > 1, cg and bicgstab run k independent solves that share every product and every kernel
// launch (each vector has its own coefficients; a converged vector is frozen).
//
// Stopping: every vector stops when its recurrence residual ||r|| falls below
// max(tolerance ||b||, absolute_tolerance) (SciPy's test, with atol); the true residual
// ||b - A x|| is then computed, and where it is still above that bound the iteration goes on
// from it (the residual is replaced) until it is below or the method stagnates. Non-convergence is a result with a reason (SolveReport), not an exception;
// exceptions are for bad input (InvalidArgument: shapes, NaN or infinite input, options),
// factorisation failures at setup (ZeroPivot) and device errors.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/device_sparse.hpp"
#include "ziggurat/matrix/ilu2.hpp"
#include "ziggurat/matrix/ordering.hpp"
#include "ziggurat/matrix/sparse.hpp"
#include "ziggurat/matrix/static_pivoting.hpp"
#include "ziggurat/ops/block_ilu.hpp"
#include "ziggurat/ops/linear_operator.hpp"
#include "ziggurat/ops/spmm.hpp"

namespace ziggurat::sparse {

enum class KrylovMethod { cg, bicgstab, gmres };
const char* to_string(KrylovMethod method);
/// "cg", "bicgstab" or "gmres"; InvalidArgument otherwise.
KrylovMethod parse_krylov_method(std::string_view text);

enum class PreconditionerKind { none, jacobi, block_jacobi, ilu0, ilu2 };
const char* to_string(PreconditionerKind kind);
/// "none", "jacobi", "block-jacobi", "ilu0" or "ilu2"; InvalidArgument otherwise.
PreconditionerKind parse_preconditioner(std::string_view text);

/// Where a solve stands, after each iteration.
struct SolveProgress {
  std::size_t iteration = 0;
  double relative_residual = 0;  ///< the recurrence's, the largest over the vectors not yet converged
  /// The iterate x in the caller's order (rows x k interleaved, in double), read from the device
  /// only when called: a hook that wants x pays one download, one that does not pays nothing.
  /// GMRES forms x only at a restart cycle's end: its per-iteration calls leave this empty.
  std::function<std::vector<double>()> iterate;
};

/// Picks the product's kernel for the matrix as the solver placed it on the device (renumbered for
/// the ordering) and k vectors: e.g. tuning's choose_bsr_kernel (tuning/bsr_autotune.hpp), which
/// the solver layer does not call itself. An empty member leaves that precision to the rule.
struct ProductKernelChooser {
  std::function<BsrKernel(const DeviceBsr<float>&, std::size_t k)> f32;
  std::function<BsrKernel(const DeviceBsr<double>&, std::size_t k)> f64;
};

struct SolverOptions {
  KrylovMethod method = KrylovMethod::bicgstab;
  PreconditionerKind preconditioner = PreconditionerKind::ilu0;
  /// ilu0 and ilu2 only; the whole system is renumbered. automatic: natural where
  /// jacobi_sweeps_chosen(), else chosen_ordering()'s.
  Ordering ordering = Ordering::automatic;
  std::size_t aggregate = kDefaultAggregate;  ///< block_colours: block rows per aggregate
  TriangularSweep sweep = TriangularSweep::automatic;  ///< ilu0, ilu2: how their triangular solves run
  /// sweep jacobi: each triangular solve's sweeps; none: chosen per triangle (chosen_jacobi_sweeps)
  std::optional<std::size_t> jacobi_sweeps;
  double threshold = kDefaultIlu2Threshold;   ///< ilu2: tau >= 0 (matrix/ilu2.hpp)
  StaticPivoting static_pivoting = StaticPivoting::automatic;  ///< ilu2; on is refused with cg
  std::size_t restart = 30;               ///< GMRES(m): m, 1..200
  double tolerance = 1e-8;                ///< on ||b - A x|| / ||b||, >= 0 (may be infinite)
  /// On ||b - A x|| itself, >= 0: a vector has converged once ||b - A x|| <
  /// max(tolerance ||b||, absolute_tolerance). The two may not both be 0.
  double absolute_tolerance = 0;
  std::size_t max_iterations = 1000;      ///< CG/BiCGStab iterations, GMRES inner iterations
  double shift = 0;                       ///< ILU(0)/ILU2/block Jacobi diagonal shift (ilu_factors.hpp)
  bool fuse = true;                       ///< fused vector operations (ops/vector_ops.hpp)
  std::optional<BsrKernel> product_kernel;  ///< the product's kernel; default: chosen, else by the rule
  ProductKernelChooser choose_product_kernel;  ///< where product_kernel is empty
  std::function<void(const SolveProgress&)> progress;  ///< called after each iteration
  /// GMRES: called at the end of each restart cycle, once x is formed (its iterate() set), with
  /// the true relative residual; SciPy's gmres(callback_type="x") calls back there.
  std::function<void(const SolveProgress&)> cycle_end;
};

/// Above this skewness (matrix/sparse.hpp: ||A - A^T||_F / ||A + A^T||_F), ILU(0)'s automatic
/// ordering on a GPU keeps a block size of 1 to 3 in natural order: convection's direction then
/// survives in the factors (on an H200, upwind at 0.27: natural 210 ms to a solution against 255
/// for colours; convection b = 2 and 3: 177 and 139 ms against 196 and 190), where a symmetric
/// system loses less to colours than their sweeps gain (laplace7: 220 ms against 410).
constexpr double kNaturalOrderSkewness = 0.05;

/// The ordering that Ordering::automatic stands for with A on `device`, by the time to solution
/// measured on the model problems of `ziggurat bench solve --suite` on an H100, an H200 and on
/// PoCL (bench/results/2026-11-28-h100-solve-suite.md, 2026-11-28-h200-sync-free.md,
/// 2026-11-28-pocl-sequential-sweeps.md, 2026-11-28-h200-python-path-3.md):
/// - ilu0 on a CPU device of at most kSequentialSweepCores compute units (ops/block_ilu.hpp):
///   natural, whose 1.2-4x fewer iterations outweigh the cores that colours' parallel sweeps use;
/// - ilu0 elsewhere, blocks of 1 to 3: colours, whose natural-order triangular solves take a
///   launch or a wait per level of little work (2 to 7 times the iterations, but each 4 to 25
///   times faster on a GPU), unless A's skewness is above kNaturalOrderSkewness (natural); larger
///   blocks: natural, whose sync-free sweeps win there. Only this case reads A (one pass);
/// - ilu2: nested dissection, whose subdomains factorise side by side;
/// - no ILU: natural (nothing to order).
/// Any other ordering is returned as it is.
template <class T>
Ordering chosen_ordering(Ordering ordering, PreconditionerKind preconditioner, const Bsr<T>& a,
                         const DeviceInfo& device);
/// The same for a matrix that has passed validate() (matrix/sparse.hpp: Validated).
template <class T>
Ordering chosen_ordering(Ordering ordering, PreconditionerKind preconditioner, const Bsr<T>& a,
                         const DeviceInfo& device, Validated);

/// Whether ILU(0)'s ordering and sweep, both asked automatic, stand for the natural order with
/// Jacobi sweeps (TriangularSweep::jacobi, as many as options.jacobi_sweeps says) in place of
/// chosen_ordering()'s: on a device that does not prefer sequential sweeps, for a scalar system
/// (b = 1) whose every row is diagonally dominant (matrix/sparse.hpp: diagonally_dominant), whose
/// factors' triangles then shrink what each sweep leaves. On an H200, BiCGStab to 1e-8 on the
/// suite's 2.1 M-row systems took 0.62x (laplace7), 0.70x (laplace27), 0.75x (anisotropic) and
/// 0.69x (upwind) the time to a solution of chosen_ordering()'s choice, and 1.05-1.10x that of
/// the best configuration measured (bench/results/2026-11-28-h200-jacobi-sweeps.md). Systems
/// without dominance keep exact solves: a few sweeps of factors with large entries may amplify
/// instead of converge. Blocks of 2 and more are left to chosen_ordering(): not measured yet.
template <class T>
bool jacobi_sweeps_chosen(const SolverOptions& options, const Bsr<T>& a, const DeviceInfo& device, Validated);

/// How a solve ended, per vector; the report's status is the worst over the vectors.
enum class SolveStatus {
  converged,       ///< true relative residual below the tolerance
  max_iterations,  ///< the iteration limit came first
  breakdown,       ///< a division by zero in the method (BiCGStab rho or omega, CG p.Ap)
  stagnation,      ///< the recurrence converged but the true residual stays above the tolerance, or
                   ///< reached a tolerance below the type's epsilon, which no residual in T can show
  not_finite,      ///< a NaN or an infinity appeared (overflow: the matrix or preconditioner is unstable)
};
const char* to_string(SolveStatus status);

struct VectorReport {
  SolveStatus status = SolveStatus::max_iterations;
  std::string reason;                 ///< a sentence: what happened, what to do
  std::size_t iterations = 0;
  double relative_residual = 0;       ///< true: ||b - A x|| / ||b|| at the end (0 when b = 0)
  double recurrence_residual = 0;     ///< the method's own estimate at the end
  std::vector<double> history;        ///< recurrence relative residual: initial, then per iteration
};

/// Device seconds per part (profiling events, the span of each operation's commands), and wall
/// seconds of the setup and of the whole solve.
struct SolveTimes {
  double setup = 0;           ///< wall: KrylovSolver's constructor, of which:
  double ordering = 0;        ///<   wall: checking the matrix, the ordering and the renumbered copy
  double preconditioner_setup = 0;  ///< wall: level sets, uploads and factorisation (waited for)
  double host_factorization = 0;    ///<   wall: ILU2/IC2's factorisation on the host's cores
  double factorization = 0;   ///< device: the preconditioner's setup kernels
  double products = 0;
  double preconditioner = 0;
  double vector_ops = 0;
  double deflation = 0;       ///< device: deflated CG's projections and corrections
  double solve = 0;           ///< wall: solve(), uploads and downloads included
  bool device_timed = false;  ///< false when the device has no profiling: device parts are 0
};

struct SolveReport {
  bool converged = false;  ///< every vector converged
  SolveStatus status = SolveStatus::max_iterations;
  std::string reason;
  std::size_t iterations = 0;        ///< the most over the vectors
  double relative_residual = 0;      ///< the largest true relative residual
  std::vector<VectorReport> vectors;
  SolveTimes times;
  std::string ordering;                            ///< the ordering the solve ran (automatic resolved)
  std::size_t lower_levels = 0, upper_levels = 0;  ///< ILU(0)'s level counts (kernel launches per solve)
  std::size_t colours = 0;                         ///< colours of the colours and block-colours orderings
  std::string sweep;            ///< ILU's triangular sweeps: levels, sync-free, sequential or jacobi
  std::size_t lower_jacobi_sweeps = 0, upper_jacobi_sweeps = 0;  ///< sweep jacobi: each solve's sweeps (else 0)
  double fill = 0;              ///< ilu0, ilu2: stored blocks of L + U over A's (ILU(0): 1)
  bool matched_rows = false;    ///< ilu2: static pivoting permuted the rows (ilu2.hpp)
  std::size_t replaced_pivots = 0;  ///< ilu2: tiny pivots replaced by static pivoting
  std::string product_kernel;
};

/// A system set up on a device: matrix (renumbered for the ordering), preconditioner, workspace.
template <class T>
class KrylovSolver {
 public:
  /// Throws InvalidArgument for a non-square matrix, NaN or infinite values, bad options (GMRES with
  /// k > 1, restart outside 1..200, tolerance <= 0, k outside 1..16, a threshold < 0, static
  /// pivoting on with cg), ZeroPivot when ILU(0), ILU2/IC2 or block Jacobi meets a singular pivot,
  /// UnsupportedFeature for double without fp64.
  KrylovSolver(const Context& context, const Bsr<T>& a, std::size_t k, SolverOptions options);
  /// The same for a matrix that has passed validate() (matrix/sparse.hpp: Validated): the set-up
  /// checks a matrix once.
  KrylovSolver(const Context& context, const Bsr<T>& a, std::size_t k, SolverOptions options, Validated);
  /// Matrix-free: A's products by `a` (k = a->vectors() right-hand sides), e.g. a stiffness
  /// applied element by element (fem::EbeOperator). The preconditioner (none, jacobi or
  /// block-jacobi; ILU(0) needs the assembled matrix) is built from `diagonal_blocks`, n x n, of
  /// which it reads only the diagonal blocks (fem::assemble_block_diagonal gives just those); the
  /// ordering stays natural. Throws as above, and InvalidArgument for ilu0, ilu2 or mismatched sizes.
  KrylovSolver(const Context& context, std::shared_ptr<LinearOperator<T>> a, const Bsr<T>& diagonal_blocks,
               SolverOptions options);
  ~KrylovSolver();
  KrylovSolver(KrylovSolver&&) noexcept;
  KrylovSolver& operator=(KrylovSolver&&) noexcept;

  /// Solves for b (a.rows x k interleaved), starting from x (a.cols x k; empty: zeros), and leaves
  /// the solution in x.
  SolveReport solve(const std::vector<T>& b, std::vector<T>& x);
  /// The same for vectors that stay on the device (an eigen-solver's iteration vectors, say):
  /// solves for columns [first, first + count) of b (a.rows x b.k() interleaved, the caller's
  /// order), starting from the same columns of x, which receive the solution; x's other columns
  /// are left as they are. count is 1..k (the solver's vectors past count solve b = 0). Nothing
  /// passes through the host but the dot products. InvalidArgument for other row counts, a
  /// window that b or x does not hold, or a b or x without a finite norm (found on the device).
  SolveReport solve(const DeviceVectors<T>& b, DeviceVectors<T>& x, std::size_t first, std::size_t count);

  /// Deflated CG (Saad, Yeung, Erhel and Guyomarc'h 2000) for the solves that follow: the error
  /// along the m columns of W (a.rows x m interleaved, the caller's order) is removed by a Galerkin
  /// correction at the start, and every direction is kept A-orthogonal to W, so that the part of
  /// A's spectrum that W holds (e.g. its lowest modes) no longer slows CG. Each iteration costs a
  /// pass over A W and one over W more (ops/block_products.hpp). `aw` is A W. m = 0 (empty vectors)
  /// turns deflation off.
  /// InvalidArgument for a method other than cg, mismatched sizes, non-finite values, or a W whose
  /// W^T A W is not positive definite (dependent columns).
  void deflate(const std::vector<T>& w, const std::vector<T>& aw, std::size_t m);
  /// The same from vectors on the device: W and A W of a.rows x m, m = w.k() (1 or more).
  /// Non-finite values show as a non-finite W^T A W (InvalidArgument).
  void deflate(const DeviceVectors<T>& w, const DeviceVectors<T>& aw);
  /// M^-1 applied by `m` (n x n, k vectors; e.g. a function called on the host) in place of a
  /// preconditioner of the options, which must be none. nullptr returns to none. InvalidArgument
  /// for other sizes or a preconditioner already set up.
  void precondition_with(std::shared_ptr<LinearOperator<T>> m);
  /// out = M^-1 in, the preconditioner the solver set up (none: a copy), for `in` in the caller's
  /// order (a.rows x k interleaved): e.g. for another solver to apply it. InvalidArgument for
  /// another size or non-finite values.
  void apply_preconditioner(const std::vector<T>& in, std::vector<T>& out);
  /// The stopping test and the iteration limit of the solves that follow (checked as the
  /// constructor checks them).
  void set_stopping(double tolerance, double absolute_tolerance, std::size_t max_iterations);
  const SolverOptions& options() const noexcept;
  /// The options' progress and cycle_end hooks for the solves that follow (a caller's hooks may
  /// differ from solve to solve).
  void set_hooks(std::function<void(const SolveProgress&)> progress, std::function<void(const SolveProgress&)> cycle_end);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One-call form: set up and solve.
template <class T>
SolveReport solve(const Context& context, const Bsr<T>& a, const std::vector<T>& b, std::vector<T>& x, std::size_t k,
                  const SolverOptions& options);

}  // namespace ziggurat::sparse
