#include "ziggurat/automatic/heat.hpp"

#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat {

template <class T>
HeatOutcome plan_tuned_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                            const DeviceProfile& profile) {
  HeatOutcome outcome;
  HeatPlanRequest planned = request;
  if (planned.depth == std::size_t{0}) {
    outcome.depth_choice = choose_heat_blocking<T>(solver.context(), solver.extents().size());
    planned.depth = outcome.depth_choice->depth;
    planned.group = outcome.depth_choice->group;
    if (planned.depth > std::size_t{1}) planned.kernel_ns_per_node = outcome.depth_choice->ns_per_node;
  }
  outcome.planned = plan_heat(solver, steps, planned, profile);
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
