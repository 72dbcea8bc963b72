#pragma once
// The peers `ziggurat-bench solve` sets beside ziggurat's Krylov solvers (solve_peers.cpp):
// ViennaCL's iterative solvers on the same OpenCL device, cuSPARSE's ILU(0) through CuPy on an
// NVIDIA GPU and SciPy on the CPU (solve_peers.py, run as a child process).

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::cli {

/// What the peers are asked to do: the same stopping rule and limits as ziggurat's run.
struct PeerSolveSettings {
  double tolerance = 1e-8;          ///< on the relative residual, as each peer defines it (note says how)
  std::size_t max_iterations = 1000;
  std::size_t restart = 30;         ///< GMRES(m)
  std::size_t block_size = 1;       ///< b of the block system (ViennaCL's block ILU(0) uses blocks of b rows)
  bool ilu_only = false;            ///< the Python peers' ILU configs alone (no Jacobi, no GMRES on the GPU)
};

/// One peer solve of A x = b: wall seconds of the preconditioner setup and of the solve (a
/// warm run: kernels compiled beforehand), iterations, and the TRUE relative residual
/// ||b - A x|| / ||b|| and error ||x - x*|| / ||x*|| computed on the host in double from the
/// returned x (never the peer's own estimate).
///
/// setup_s includes the matrix's upload to the device (timed once, shared by a peer's configs),
/// as ziggurat's setup does; solve_s includes the upload of b and the download of x.
struct PeerSolve {
  std::string peer;            ///< "ViennaCL 1.7", "cuSPARSE (CuPy 13.3.0)", "SciPy 1.10.1"
  std::string method;          ///< "bicgstab", "gmres30", "cg"
  std::string preconditioner;  ///< "ilu0", "ilu0 levels", "block-ilu0", "chow-patel", "jacobi", "spilu", ...
  bool ran = false;
  std::string why_not;         ///< when !ran: a sentence
  std::string device;          ///< where it ran
  std::size_t iterations = 0;
  double setup_s = 0, solve_s = 0;
  double relative_residual = std::numeric_limits<double>::quiet_NaN();
  double error = std::numeric_limits<double>::quiet_NaN();
  std::string note;            ///< caveats: stopping rule differs, not exactly ILU(0), host factorisation, ...
};

/// How good a solution is: the true relative residual ||b - A x|| / ||b|| and the error
/// ||x - x*|| / ||x*||, in double (A x summed in double by sparse::multiply, rounded once to T).
/// The one rule by which the benchmark judges every solver, ziggurat's included.
struct SolutionQuality {
  double relative_residual = 0, error = 0;
};
template <class T>
SolutionQuality judge_solution(const sparse::Csr<T>& a, const std::vector<T>& b, const std::vector<T>& exact,
                               const std::vector<T>& x);

/// ViennaCL 1.7.1's iterative solvers in its OpenCL backend on the cl_context, device and compute
/// queue of `context` (viennacl_context_id: no second OpenCL context), one PeerSolve per config:
///   bicgstab + ilu0         ilu0_precond: factorised on the host, triangular solves on the host
///                           (each application moves the vector to the host and back)
///   bicgstab + ilu0 levels  ilu0_precond with use_level_scheduling(true): factorised and
///                           level-scheduled on the host, triangular solves on the device
///   bicgstab + block-ilu0   block_ilu_precond<..., ilu0_tag> over blocks of b rows, one per b-row
///                           group: the exact LU of each b x b diagonal block (block Jacobi), the
///                           triangular solves on the device, one work-group per block
///   bicgstab + chow-patel   chow_patel_ilu_precond, ViennaCL's defaults (3 sweeps on the device,
///                           2 Jacobi iterations per triangular solve)
///   bicgstab + jacobi       jacobi_precond
///   gmres<m> + ilu0 levels  GMRES(m), m = settings.restart
/// ViennaCL preconditions from the left: its solvers stop when ||M^-1 r|| / ||b|| < tolerance,
/// r being BiCGStab's recurrence residual or GMRES's least-squares estimate (each note says so).
/// Every config first runs on a small system (10^3 rows), which compiles ViennaCL's kernels; the
/// one timed run on `a` follows. One copy of `a` lives on the device for all configs.
///
/// A config that fails is ran = false with why_not (never an exception), and so is every config
/// when ViennaCL cannot take the matrix (double without cl_khr_fp64, an empty matrix, a buffer of
/// 4 GiB or more). Throws InvalidArgument when a is not square or b or exact does not fit it.
/// ViennaCL's current context is process-wide: see viennacl_context_id (peer_support.hpp).
template <class T>
std::vector<PeerSolve> viennacl_solves(const Context& context, const sparse::Csr<T>& a, const std::vector<T>& b,
                                       const std::vector<T>& exact, const PeerSolveSettings& settings);

/// The Python peers: runs solve_peers.py (beside the program) with the interpreter `python` on
/// the system, written into a scratch folder that is removed afterwards, reads its JSON answer
/// and the x each config wrote, and judges every x here (one definition of the residual for all
/// peers). The script's configs, each its own PeerSolve (its docstring tells the details):
///   SciPy (CPU):  bicgstab + spilu, gmres<m> + spilu (SuperLU's ILUTP with about ILU(0)'s
///                 storage, not ILU(0)), bicgstab + jacobi; each is skipped (ran = false) when
///                 the matrix has more than `scipy_ilu_limit` stored values
///   cuSPARSE (CuPy, NVIDIA GPU):  bicgstab + ilu0 (csrilu02 and SpSM triangular solves inside a
///                 right-preconditioned BiCGStab with ziggurat's stopping rule), gmres<m> + ilu0
///                 (cupyx's gmres with that ILU(0)), bicgstab + jacobi (cupyx's bicgstab, where
///                 this CuPy has one)
/// A peer that is missing (no numpy, scipy or cupy, no CUDA device) gives its configs ran = false
/// with the reason; no interpreter or a script that gives no answer gives one ran = false entry
/// per peer. Never an exception, except InvalidArgument like viennacl_solves.
template <class T>
std::vector<PeerSolve> python_solves(const std::string& python, const sparse::Csr<T>& a, const std::vector<T>& b,
                                     const std::vector<T>& exact, const PeerSolveSettings& settings,
                                     std::size_t scipy_ilu_limit = 30'000'000);

}  // namespace ziggurat::cli
