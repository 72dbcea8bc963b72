#pragma once
// The Poisson solver in one call: plan with the device's measured profile
// (tuning/poisson_planner.hpp) and run the plan (solver/poisson_pyramid.hpp).

#include <optional>

#include "ziggurat/solver/poisson_pyramid.hpp"
#include "ziggurat/tuning/blocking_autotune.hpp"
#include "ziggurat/tuning/device_profile.hpp"
#include "ziggurat/tuning/poisson_planner.hpp"

namespace ziggurat {

/// What a planned run did: the plan with its prediction, and the run.
struct PoissonOutcome {
  PlannedPoissonRun planned;
  PoissonRun run;
  std::optional<BlockingChoice> depth_choice;  ///< how a requested depth of 0 was tuned
};

/// Plans a run of `solver` as `request` asks with the constants of `profile`, then runs it until
/// `stop` says so. A requested depth of 0 becomes the device's tuned depth and work-group for
/// the sweeps (choose_jacobi_blocking(): read, or measured once and recorded). Errors: those of
/// plan_poisson(), then those of PoissonSolver::solve().
template <class T>
PoissonOutcome solve_poisson(PoissonSolver<T>& solver, const PoissonStop& stop, const PoissonPlanRequest& request,
                             const DeviceProfile& profile, const PoissonRunOptions& options = {});

/// The same with the device's cached profile, measured now (and cached) when there is none.
template <class T>
PoissonOutcome solve_poisson(PoissonSolver<T>& solver, const PoissonStop& stop, const PoissonPlanRequest& request = {},
                             const PoissonRunOptions& options = {});

}  // namespace ziggurat
