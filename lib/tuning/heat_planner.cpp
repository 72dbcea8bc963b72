#include "ziggurat/tuning/heat_planner.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "ops/heat_stencil.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/solver/in_device_heat.hpp"
#include "ziggurat/tuning/blocking_autotune.hpp"
#include "ziggurat/tuning/model_constants.hpp"

namespace ziggurat {

const char* to_string(HeatMode mode) {
  switch (mode) {
    case HeatMode::automatic: return "auto";
    case HeatMode::incore: return "incore";
    case HeatMode::trivial: return "trivial";
    case HeatMode::strip: return "strip";
    case HeatMode::block: return "block";
  }
  return "?";
}

HeatMode parse_heat_mode(std::string_view text) {
  for (const HeatMode mode : {HeatMode::automatic, HeatMode::incore, HeatMode::trivial, HeatMode::strip, HeatMode::block}) {
    if (text == to_string(mode)) return mode;
  }
  throw InvalidArgument("the heat mode is auto, incore, trivial, strip or block, not '" + std::string(text) + "'");
}

std::uint64_t default_device_budget(const DeviceInfo& device) { return device.global_mem_bytes / 10 * 9; }

template <class T>
model::Problem heat_problem(const HeatSolver<T>& solver, std::size_t steps) {
  model::Problem problem;
  problem.extents = solver.extents();
  problem.steps = steps;
  problem.value_bytes = sizeof(T);
  problem.row_alignment = solver.row_alignment();
  return problem;
}

template <class T>
PlannedHeatRun plan_heat(const HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                         const DeviceProfile& profile) {
  return plan_heat<T>(solver.context().device(), solver.extents(), solver.pinned_host_memory(), steps, request,
                      profile);
}

template <class T>
PlannedHeatRun plan_heat(const DeviceInfo& device, const std::vector<std::size_t>& extents, bool pinned_host_memory,
                         std::size_t steps, const HeatPlanRequest& request, const DeviceProfile& profile) {
  model::Problem problem;
  problem.extents = extents;
  problem.steps = steps;
  problem.value_bytes = sizeof(T);
  problem.row_alignment = detail::row_alignment(device, sizeof(T));  // as the solver pads its buffers
  problem.validate();
  if (request.decomposition && *request.decomposition != Decomposition::strip &&
      *request.decomposition != Decomposition::block) {
    throw InvalidArgument("the decomposition is strip or block");
  }
  PlannedHeatRun run;
  run.schedule = request.schedule;
  run.depth = request.depth.value_or(1);
  run.group = request.group;
  if (run.depth == 0)
    throw InvalidArgument("a depth of 0 (the tuned one) is resolved by advance_heat(); plan a depth of at least 1");
  model::DeviceConstants k =
      model::heat_constants(profile, extents.size(), sizeof(T), request.kernel_ns_per_node, pinned_host_memory);
  k.launch_depth = run.depth;
  run.kernel_ns_per_node = k.tau_a_ns;
  run.kernel_rate = request.kernel_ns_per_node ? "given" : "profile";
  run.budget_bytes = request.device_memory.value_or(default_device_budget(device));
  // The buffers the solver keeps (solver_buffer_layers), none beyond the device's largest
  // allocation; a grid whose buffer does not fit one allocation is not run in core.
  const std::size_t layers = solver_buffer_layers(request.schedule);
  const model::Budget budget{std::min<std::uint64_t>(run.budget_bytes, layers * device.max_alloc_bytes), layers};
  const std::uint64_t incore_bytes = InDeviceHeat<T>::buffer_bytes(device, extents);
  const model::Budget pyramid_budget{
      incore_bytes > device.max_alloc_bytes ? std::min(budget.bytes, 2 * incore_bytes - 1) : budget.bytes, layers};
  const Schedule schedule = request.schedule;
  switch (request.mode) {
    case HeatMode::incore:
      if (incore_bytes > device.max_alloc_bytes) {
        throw InvalidArgument("grid " + extents_string(extents) + " of " + type_name<T>() + " needs device buffers of " +
                              std::to_string(incore_bytes >> 20) + " MiB, more than " + device.label() +
                              " allocates at once: run it out of core (mode strip, block or auto)");
      }
      run.predicted = model::best_plan(problem, budget, k, schedule, Decomposition::incore);
      break;
    case HeatMode::trivial:
      run.predicted = model::best_plan(problem, pyramid_budget, k, schedule, request.decomposition.value_or(Decomposition::strip), 1);
      break;
    case HeatMode::strip:
      run.predicted = model::best_plan(problem, pyramid_budget, k, schedule, Decomposition::strip, request.height);
      break;
    case HeatMode::block:
      run.predicted = model::best_plan(problem, pyramid_budget, k, schedule, Decomposition::block, request.height);
      break;
    case HeatMode::automatic:
      run.predicted = request.decomposition
                          ? model::best_plan(problem, pyramid_budget, k, schedule, *request.decomposition, request.height)
                          : model::best_plan_auto(problem, pyramid_budget, k, schedule, request.height);
      break;
  }
  return run;
}

template <class T>
DepthPlans plan_heat_depths(const DeviceInfo& device, const std::vector<std::size_t>& extents, bool pinned_host_memory,
                            std::size_t steps, const HeatPlanRequest& request, const DeviceProfile& profile,
                            const std::vector<std::pair<std::string, double>>& candidates) {
  struct Candidate {
    std::string name;
    BlockedGroup group;
    double seconds;
  };
  std::map<std::size_t, Candidate> fastest;  // each depth's fastest group, the smallest depth first
  for (const auto& [name, seconds] : candidates) {
    const auto [depth, group] = parse_blocking_candidate(name);
    const auto [at, added] = fastest.try_emplace(depth, Candidate{name, group, seconds});
    if (!added && seconds < at->second.seconds) at->second = {name, group, seconds};
  }
  if (fastest.empty()) throw InvalidArgument("no tuned launch depth to plan with: the tuning record lists no candidate");
  DepthPlans plans;
  for (const auto& [depth, candidate] : fastest) {
    HeatPlanRequest at_depth = request;
    at_depth.depth = depth;
    at_depth.group = candidate.group;
    // Single steps too at the record's rate: every depth timed by one timer on one grid, so that
    // the depths compare on one footing (the profile's single-step rate was measured apart).
    at_depth.kernel_ns_per_node = candidate.seconds * 1e9;
    PlannedHeatRun run = plan_heat<T>(device, extents, pinned_host_memory, steps, at_depth, profile);
    run.kernel_rate = "tuning record";
    const model::Plan& plan = run.predicted;
    plans.depths.push_back({candidate.name, plan.layout.height, plan.prediction.total_ns * 1e-9});
    if (plans.depths.size() == 1 || plan.prediction.total_ns < plans.chosen.predicted.prediction.total_ns)
      plans.chosen = std::move(run);
  }
  return plans;
}

template <class T>
std::uint64_t minimum_heat_budget(const HeatSolver<T>& solver, std::size_t steps, Decomposition decomposition,
                                  std::size_t height, Schedule schedule) {
  return model::minimum_budget(heat_problem(solver, steps), decomposition, height, solver_buffer_layers(schedule));
}

#define ZIGGURAT_HEAT_PLANNER(T)                                                                                 \
  template model::Problem heat_problem(const HeatSolver<T>&, std::size_t);                                      \
  template PlannedHeatRun plan_heat(const HeatSolver<T>&, std::size_t, const HeatPlanRequest&, const DeviceProfile&); \
  template PlannedHeatRun plan_heat<T>(const DeviceInfo&, const std::vector<std::size_t>&, bool, std::size_t,        \
                                       const HeatPlanRequest&, const DeviceProfile&);                              \
  template DepthPlans plan_heat_depths<T>(const DeviceInfo&, const std::vector<std::size_t>&, bool, std::size_t,     \
                                          const HeatPlanRequest&, const DeviceProfile&,                             \
                                          const std::vector<std::pair<std::string, double>>&);                     \
  template std::uint64_t minimum_heat_budget(const HeatSolver<T>&, std::size_t, Decomposition, std::size_t, Schedule);
ZIGGURAT_HEAT_PLANNER(float)
ZIGGURAT_HEAT_PLANNER(double)
#undef ZIGGURAT_HEAT_PLANNER

}  // namespace ziggurat
