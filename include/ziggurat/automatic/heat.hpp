#pragma once
// The heat solver in one call: plan with the device's measured profile (tuning/heat_planner.hpp)
// and run the plan (solver/heat_pyramid.hpp). The solver never measures and the planner never
// runs; this layer, above both, does the two in order.

#include <cstddef>
#include <optional>
#include <vector>

#include "ziggurat/solver/heat_pyramid.hpp"
#include "ziggurat/tuning/device_profile.hpp"
#include "ziggurat/tuning/blocking_autotune.hpp"
#include "ziggurat/tuning/heat_planner.hpp"

namespace ziggurat {

/// What a planned run did: the plan with its prediction, and the run.
struct HeatOutcome {
  PlannedHeatRun planned;
  HeatRun run;
  /// The tuning behind a requested depth of 0: every candidate's measured time. Its depth and
  /// group are the fastest in core; the plan's (planned.depth, planned.group) are chosen with the
  /// height and may differ.
  std::optional<BlockingChoice> depth_choice;
  std::vector<DepthPlan> depth_plans;          ///< each tuned depth's plan, for a requested depth of 0
};

/// What advance_heat() plans for `steps` steps of `solver`, without running it (no run in the
/// outcome): a requested depth of 0 is chosen with the plan among the device's tuned depths
/// (plan_heat_depths()). Errors: those of plan_heat().
template <class T>
HeatOutcome plan_tuned_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                            const DeviceProfile& profile);

/// Plans `steps` steps of `solver` as `request` asks with the constants of `profile`, then runs
/// the plan (zero steps plan and run nothing). A requested depth of 0 is chosen among the device's
/// tuned depths (choose_heat_blocking(): read, or measured once and recorded), each planned with
/// its measured kernel time, the fastest plan kept. Errors: those of plan_heat(), then those of
/// HeatSolver::advance().
template <class T>
HeatOutcome advance_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                         const DeviceProfile& profile, const HeatRunOptions& options = {});

/// The same with the device's cached profile, measured now (and cached) when there is none
/// (load_or_calibrate()).
template <class T>
HeatOutcome advance_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request = {},
                         const HeatRunOptions& options = {});

}  // namespace ziggurat
