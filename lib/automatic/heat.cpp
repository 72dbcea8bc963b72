#include "ziggurat/automatic/heat.hpp"

#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat {

template <class T>
HeatOutcome plan_tuned_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                            const DeviceProfile& profile) {
  HeatOutcome outcome;
  if (request.depth != std::size_t{0}) {
    outcome.planned = plan_heat(solver, steps, request, profile);
    return outcome;
  }
  // The fastest depth in core may lose where the budget holds only low pyramids: T and n together.
  outcome.depth_choice = choose_heat_blocking<T>(solver.context(), solver.extents().size());
  DepthPlans plans = plan_heat_depths<T>(solver.context().device(), solver.extents(), solver.pinned_host_memory(), steps,
                                         request, profile, outcome.depth_choice->seconds);
  outcome.planned = std::move(plans.chosen);
  outcome.depth_plans = std::move(plans.depths);
  return outcome;
}

template <class T>
HeatOutcome advance_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                         const DeviceProfile& profile, const HeatRunOptions& options) {
  if (steps == 0) return {};  // nothing to plan, nothing to run
  HeatOutcome outcome = plan_tuned_heat(solver, steps, request, profile);
  outcome.run = solver.advance(steps, outcome.planned.plan(), options);
  return outcome;
}

template <class T>
HeatOutcome advance_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                         const HeatRunOptions& options) {
  return advance_heat(solver, steps, request, load_or_calibrate(solver.context()), options);
}

#define ZIGGURAT_AUTOMATIC_HEAT(T)                                                                                    \
  template HeatOutcome plan_tuned_heat(HeatSolver<T>&, std::size_t, const HeatPlanRequest&, const DeviceProfile&);    \
  template HeatOutcome advance_heat(HeatSolver<T>&, std::size_t, const HeatPlanRequest&, const DeviceProfile&,        \
                                    const HeatRunOptions&);                                                          \
  template HeatOutcome advance_heat(HeatSolver<T>&, std::size_t, const HeatPlanRequest&, const HeatRunOptions&);
ZIGGURAT_AUTOMATIC_HEAT(float)
ZIGGURAT_AUTOMATIC_HEAT(double)
#undef ZIGGURAT_AUTOMATIC_HEAT

}  // namespace ziggurat
