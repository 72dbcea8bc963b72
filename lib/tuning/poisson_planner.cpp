#include "ziggurat/tuning/poisson_planner.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/solver/in_device_heat.hpp"
#include "ziggurat/tuning/heat_planner.hpp"
#include "ziggurat/tuning/model_constants.hpp"

namespace ziggurat {

const char* to_string(PoissonMode mode) {
  switch (mode) {
    case PoissonMode::automatic: return "auto";
    case PoissonMode::incore: return "incore";
    case PoissonMode::strip: return "strip";
  }
  return "?";
}

PoissonMode parse_poisson_mode(std::string_view text) {
  for (const PoissonMode mode : {PoissonMode::automatic, PoissonMode::incore, PoissonMode::strip}) {
    if (text == to_string(mode)) return mode;
  }
  throw InvalidArgument("the Poisson mode is auto, incore or strip, not '" + std::string(text) + "'");
}

std::size_t poisson_buffer_layers(Schedule schedule) { return solver_buffer_layers(schedule) / 2 * 3; }

template <class T>
model::Problem poisson_problem(const PoissonSolver<T>& solver, std::size_t sweeps) {
  model::Problem problem;
  problem.extents = solver.extents();
  problem.steps = sweeps;
  problem.value_bytes = sizeof(T);
  problem.row_alignment = solver.row_alignment();
  problem.uploaded_fields = 2;
  return problem;
}

model::DeviceConstants poisson_constants(const DeviceProfile& profile, std::size_t value_bytes, bool pinned_host) {
  const auto tau_a = profile.jacobi_tau_a_ns(value_bytes);
  if (!tau_a) {
    throw UnsupportedFeature("the profile of " + profile.device + " has no measured rate of the Jacobi sweep in " +
                             (value_bytes == 4 ? "float" : "double") +
                             " (" + RateNeed::jacobi(value_bytes).label() +
                             "): measure it with load_or_calibrate(context, ProfileNeeds::jacobi(" +
                             std::to_string(value_bytes) + ")) or `ziggurat calibrate` (the device may lack fp64)");
  }
  return model::heat_constants(profile, 3, value_bytes, *tau_a, pinned_host);
}

template <class T>
PlannedPoissonRun plan_poisson(const PoissonSolver<T>& solver, const PoissonStop& stop, const PoissonPlanRequest& request,
                               const DeviceProfile& profile) {
  const DeviceInfo& device = solver.context().device();
  if (stop.max_sweeps == 0) throw InvalidArgument("plan at least one sweep (max_sweeps is 0)");
  if (request.height && (*request.height < 1 || *request.height > stop.max_sweeps)) {
    throw InvalidArgument("the height (sweeps per pass) must be between 1 and the " + std::to_string(stop.max_sweeps) +
                          " sweeps allowed, not " + std::to_string(*request.height));
  }
  const model::Problem problem = poisson_problem(solver, stop.max_sweeps);
  problem.validate();
  const model::DeviceConstants k = poisson_constants(profile, sizeof(T), solver.pinned_host_memory());
  PlannedPoissonRun run;
  run.schedule = request.schedule;
  run.depth = request.depth;
  run.group = request.group;
  if (run.depth == 0) throw InvalidArgument("a Poisson plan runs at least one sweep a launch (depth >= 1)");
  run.budget_bytes = request.device_memory.value_or(default_device_budget(device));
  const std::size_t layers = poisson_buffer_layers(request.schedule);
  const model::Budget budget{std::min<std::uint64_t>(run.budget_bytes, layers * device.max_alloc_bytes), layers};
  const std::uint64_t incore_bytes = InDeviceHeat<T>::buffer_bytes(device, problem.extents);
  const bool one_allocation = incore_bytes <= device.max_alloc_bytes;
  const bool incore_fits = one_allocation && model::fits_incore(problem, run.budget_bytes);
  if (request.mode == PoissonMode::incore && !incore_fits) {
    throw InvalidArgument("grid " + extents_string(problem.extents) + " of " + type_name<T>() +
                          " does not fit in core: its two layers and right-hand side need " +
                          std::to_string(3 * incore_bytes >> 20) + " MiB in buffers of at most " +
                          std::to_string(device.max_alloc_bytes >> 20) + " MiB, the budget is " +
                          std::to_string(run.budget_bytes >> 20) + " MiB: run it in strip passes (mode strip or auto)");
  }
  if (request.mode == PoissonMode::incore || (request.mode == PoissonMode::automatic && incore_fits)) {
    run.predicted = model::best_plan(problem, {run.budget_bytes, layers}, k, request.schedule, Decomposition::incore);
    run.predicted.layout.height = request.height.value_or(0);
    return run;
  }
  run.predicted = model::best_plan(problem, budget, k, request.schedule, Decomposition::strip, request.height);
  const std::size_t R = run.predicted.buffer_extent, h = run.predicted.layout.height;
  if (R >= 2 * h + 1) {
    const double n = std::sqrt(static_cast<double>(problem.extents[0]) * static_cast<double>(problem.extents[1]));
    run.paper_ns_per_sweep = model::jacobi_pyramid_ns(static_cast<std::size_t>(std::lround(n)), problem.extents[2], R, h,
                                                      0.5 * (k.upload.ns_per_value + k.download.ns_per_value), k.tau_a_ns) /
                             static_cast<double>(h);
  }
  return run;
}

template <class T>
std::uint64_t minimum_poisson_budget(const PoissonSolver<T>& solver, std::size_t sweeps, std::size_t height,
                                     Schedule schedule) {
  return model::minimum_budget(poisson_problem(solver, sweeps), Decomposition::strip, height, poisson_buffer_layers(schedule));
}

template model::Problem poisson_problem<float>(const PoissonSolver<float>&, std::size_t);
template model::Problem poisson_problem<double>(const PoissonSolver<double>&, std::size_t);
template PlannedPoissonRun plan_poisson<float>(const PoissonSolver<float>&, const PoissonStop&, const PoissonPlanRequest&,
                                               const DeviceProfile&);
template PlannedPoissonRun plan_poisson<double>(const PoissonSolver<double>&, const PoissonStop&, const PoissonPlanRequest&,
                                                const DeviceProfile&);
template std::uint64_t minimum_poisson_budget<float>(const PoissonSolver<float>&, std::size_t, std::size_t, Schedule);
template std::uint64_t minimum_poisson_budget<double>(const PoissonSolver<double>&, std::size_t, std::size_t, Schedule);

}  // namespace ziggurat
