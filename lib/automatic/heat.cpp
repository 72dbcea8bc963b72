#include "ziggurat/automatic/heat.hpp"

#include "ops/heat_blocked.hpp"
#include "ziggurat/base/log.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat {

namespace {

// The time a node and step that the device's tuning record holds for `depth` in the work-group
// that will run it (nothing is measured here), or none: plan_heat() then charges the profile's
// single-step rate. The group is resolved first, record or not, so that a depth too deep for the
// device is refused while planning.
template <class T>
std::optional<double> recorded_rate(const DeviceInfo& device, std::size_t dims, std::size_t depth,
                                    const BlockedGroup& group) {
  const BlockedGroup runs = depth == 1 ? group : detail::blocked_group_for(device, dims, sizeof(T), depth, group);
  const auto record = load_tuning_record(device, heat_blocking_key<T>(dims));
  if (!record) return std::nullopt;
  const std::string name = blocking_candidate_name(depth, runs);
  for (const auto& [candidate, seconds] : record->seconds)
    if (candidate == name) return seconds * 1e9;
  return std::nullopt;
}

// "heat plan on DEVICE: strip, n = 12, tasks owning 480 rows, 21 passes, overlapped, 4 steps a
// launch (kernel rate from the tuning record), 1.31 s predicted".
void log_plan(const PlannedHeatRun& planned, const DeviceInfo& device) {
  if (!log_enabled(LogLevel::info)) return;
  const PyramidLayout& layout = planned.predicted.layout;
  const std::string pyramids = layout.decomposition == Decomposition::incore
                                   ? "in core"
                                   : std::string(to_string(layout.decomposition)) + ", n = " +
                                         std::to_string(layout.height) + ", tasks owning " +
                                         std::to_string(layout.task_extent) + ", " +
                                         std::to_string(planned.predicted.prediction.passes) + " passes, " +
                                         to_string(planned.schedule);
  log(LogLevel::info, "plan",
      "heat on " + device.label() + ": " + pyramids + ", " + std::to_string(planned.depth) + " steps a launch (kernel rate from the " + planned.kernel_rate + "), " +
          std::to_string(planned.predicted.prediction.total_ns * 1e-9) + " s predicted");
}

}  // namespace

template <class T>
HeatOutcome plan_tuned_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                            const DeviceProfile& profile) {
  HeatOutcome outcome;
  if (request.depth != std::size_t{0}) {
    HeatPlanRequest planned = request;
    const bool given = planned.kernel_ns_per_node.has_value();
    if (planned.depth && !given)  // a named depth, single steps too
      planned.kernel_ns_per_node =
          recorded_rate<T>(solver.context().device(), solver.extents().size(), *planned.depth, planned.group);
    outcome.planned = plan_heat(solver, steps, planned, profile);
    if (!given && planned.kernel_ns_per_node) outcome.planned.kernel_rate = "tuning record";
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
  log_plan(outcome.planned, solver.context().device());
  outcome.run = solver.advance(steps, outcome.planned.plan(), options);
  return outcome;
}

template <class T>
HeatOutcome advance_heat(HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                         const HeatRunOptions& options) {
  return advance_heat(solver, steps, request, load_or_calibrate(solver.context(), ProfileNeeds::heat(solver.extents().size(), sizeof(T))), options);
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
