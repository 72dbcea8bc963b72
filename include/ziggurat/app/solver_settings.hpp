#pragma once
// A Krylov solve's settings as people give them, by name: `ziggurat solve`'s options and the
// keywords of ziggurat.solve and ziggurat.KrylovSolver. They are checked here, once, and turned
// into the library's SolverOptions, so that every front end takes and refuses the same values.
#include <cstddef>
#include <string>

#include "ziggurat/base/context.hpp"
#include "ziggurat/solver/krylov.hpp"

namespace ziggurat::app {

struct SolverSettings {
  std::string method = "bicgstab";       ///< cg, bicgstab or gmres
  std::string preconditioner = "ilu0";   ///< none, jacobi, block-jacobi, ilu0 or ilu2
  std::string ordering = "auto";         ///< auto, natural, levels, colours, block-colours, nested-dissection
  std::string sweep = "auto";            ///< ILU's triangular solves: auto, levels, sync-free, sequential or jacobi
  std::string jacobi_sweeps = "auto";    ///< sweep jacobi: a triangular solve's sweeps, 0 to 100000, or auto
  std::string static_pivoting = "auto";  ///< ilu2: auto, on or off
  std::string kernel = "auto";           ///< the products' block CSR kernel (product_kernel.hpp)
  double rtol = 1e-8;                    ///< on ||b - A x|| / ||b||, >= 0
  double atol = 0;                       ///< on ||b - A x||, >= 0; not both 0
  std::size_t max_iterations = 1000;     ///< CG and BiCGStab iterations, GMRES inner iterations
  std::size_t restart = 30;              ///< GMRES(m): m, 1 to 200 (>= 1 for the other methods)
  std::size_t aggregate = sparse::kDefaultAggregate;  ///< block-colours: block rows an aggregate, >= 1
  double threshold = sparse::kDefaultIlu2Threshold;   ///< ilu2's drop threshold tau, finite, >= 0
  double shift = 0;                      ///< diagonal shift of ILU and Jacobi, finite
  bool fused = true;                     ///< fused vector operations
};

/// Checks every setting: InvalidArgument naming the setting, the value given and the values it
/// takes. (Combinations that need the matrix, such as the block size, are the solver's to check.)
void check_solver_settings(const SolverSettings& settings);

/// The library's options for `settings`, checked first, with the product kernel that `kernel`
/// names on `context` (set_product_kernel). The progress hooks are the caller's to set.
sparse::SolverOptions solver_options(const SolverSettings& settings, const Context& context);

}  // namespace ziggurat::app
