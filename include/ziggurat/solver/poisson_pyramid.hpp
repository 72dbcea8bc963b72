#pragma once
// The stationary 3D heat (Poisson) equation on a grid held in host memory, solved by Jacobi
// sweeps (ops/poisson_scheme.hpp) in pyramid passes (method notes, section 2): blocks of R planes
// plus h halo planes a side go to the device with their right-hand side, h sweeps run there while
// the valid region shrinks, and the owned planes come back. Passes are cut and run by the same
// code as the explicit heat solver's (solver/heat_pyramid.hpp); a plan whose grid fits the
// device runs in core instead: one upload, sweeps, one download.
//
// The stopping test is the largest update of the last sweep of each pass (in core: of every
// `height`-th sweep), max |U' - U| over the interior, measured and reduced on the device; the run
// stops at the first test below the tolerance, or after the most sweeps allowed. So a tolerance
// means the same thing whatever the height: the change one sweep makes.
//
// Every plan (height, task size, budget, in core or not) gives the same bits after the same number
// of sweeps: the tasks run the same kernel on the same values and only recompute.
//
// Host memory: two layers of the grid and the right-hand side, page-locked where the OpenCL
// runtime allows it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/solver/pyramid_layout.hpp"

namespace ziggurat {

/// When the iteration stops.
struct PoissonStop {
  double tolerance = 1e-6;        ///< largest update of one sweep; 0 runs exactly max_sweeps sweeps
  std::size_t max_sweeps = 10000;
};

enum class PoissonReason {
  converged,   ///< the largest update fell below the tolerance
  max_sweeps,  ///< the sweeps allowed were done first
  diverged,    ///< the update became NaN or infinite
};
const char* to_string(PoissonReason reason);

/// Progress of a run, reported after each stopping test.
struct PoissonProgress {
  std::size_t sweeps_done = 0, max_sweeps = 0;
  double update = 0;       ///< largest update of the last sweep
  double seconds = 0;      ///< since the run started
  double eta_seconds = 0;  ///< to the tolerance at the update's rate of decay so far (or to max_sweeps)
};

struct PoissonRunOptions {
  std::function<void(const PoissonProgress&)> progress;  ///< called on the calling thread
};

/// What a run did.
struct PoissonRun {
  HeatPlan plan;                   ///< the plan that ran (in core: height = sweeps between tests)
  PoissonReason reason = PoissonReason::max_sweeps;
  std::size_t sweeps = 0;          ///< sweeps done by this run
  std::size_t tasks = 0;           ///< per pass (1 in core)
  std::size_t passes = 0;          ///< passes (in core: stopping tests)
  double update = 0;               ///< largest update of the last sweep
  double seconds = 0;              ///< wall time, first upload to last download
  double ns_per_node = 0;          ///< seconds / (interior nodes x sweeps)
  std::uint64_t device_bytes = 0;  ///< device memory the run's buffers took
  bool pinned_host_memory = false;
};

/// A Poisson problem in host memory, solved on a device by Jacobi sweeps.
template <class T>
class PoissonSolver {
 public:
  /// `initial`: the Dirichlet values on the boundary and the first guess inside; `rhs`: f on the
  /// same grid (its boundary values are not used); `spacing`: h. Both are copied. Throws
  /// InvalidArgument for a grid that is not 3D with at least 3 nodes a side, extents of f that
  /// differ, a value that is NaN or infinite (naming it), or an unusable h; UnsupportedFeature
  /// for double on a device without fp64.
  PoissonSolver(const Context& context, const Grid<T>& initial, const Grid<T>& rhs, double spacing);
  PoissonSolver(PoissonSolver&&) noexcept;
  PoissonSolver& operator=(PoissonSolver&&) noexcept;
  PoissonSolver(const PoissonSolver&) = delete;
  PoissonSolver& operator=(const PoissonSolver&) = delete;
  ~PoissonSolver();

  /// Sweeps until `stop` says so, as `plan` says: in core (layout.height = sweeps between
  /// stopping tests, 0 for 32), or strip passes of layout.height sweeps (validate(PyramidLayout)).
  /// Continues from the current field. Errors as HeatSolver::advance; after a failure the field
  /// holds the state after the last pass that completed.
  PoissonRun solve(const PoissonStop& stop, const HeatPlan& plan, const PoissonRunOptions& options = {});

  /// The current field (a copy), and a view of it valid until the next solve().
  Grid<T> field() const;
  const T* data() const noexcept;
  /// The true residual max |f + Laplace_h u| of the current field (host, double, every core).
  double residual() const;
  double spacing() const noexcept;
  const std::vector<std::size_t>& extents() const noexcept;
  std::size_t sweeps_done() const noexcept;
  const Context& context() const noexcept;
  /// Device buffers pad plane rows to a multiple of this many values.
  std::size_t row_alignment() const noexcept;
  bool pinned_host_memory() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ziggurat
