#include "ziggurat/automatic/poisson.hpp"

#include <string>

#include "ziggurat/base/log.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat {

namespace {

// "poisson plan on DEVICE: strip pyramid, h = 8 sweeps a pass, 12 passes, overlapped, 1 sweep a
// launch, 0.82 s predicted for 1000 sweeps".
void log_plan(const PlannedPoissonRun& planned, const DeviceInfo& device, std::size_t max_sweeps) {
  if (!log_enabled(LogLevel::info)) return;
  const PyramidLayout& layout = planned.predicted.layout;
  const std::string pyramids =
      layout.decomposition == Decomposition::incore
          ? "in core, a stopping test every " + std::to_string(layout.height) + " sweeps"
          : std::string(to_string(layout.decomposition)) + " pyramid, h = " + std::to_string(layout.height) +
                " sweeps a pass, " + std::to_string(planned.predicted.prediction.passes) + " passes, " +
                to_string(planned.schedule);
  log(LogLevel::info, "plan",
      "poisson on " + device.label() + ": " + pyramids + ", " + std::to_string(planned.depth) + " sweeps a launch, " +
          std::to_string(planned.predicted.prediction.total_ns * 1e-9) + " s predicted for " +
          std::to_string(max_sweeps) + " sweeps");
}

}  // namespace

template <class T>
PoissonOutcome solve_poisson(PoissonSolver<T>& solver, const PoissonStop& stop, const PoissonPlanRequest& request,
                             const DeviceProfile& profile, const PoissonRunOptions& options) {
  PoissonOutcome outcome;
  if (stop.max_sweeps == 0) return outcome;  // nothing to plan, nothing to run
  PoissonPlanRequest planned = request;
  if (planned.depth == 0) {
    outcome.depth_choice = choose_jacobi_blocking<T>(solver.context());
    planned.depth = outcome.depth_choice->depth;
    planned.group = outcome.depth_choice->group;
  }
  outcome.planned = plan_poisson(solver, stop, planned, profile);
  log_plan(outcome.planned, solver.context().device(), stop.max_sweeps);
  outcome.run = solver.solve(stop, outcome.planned.plan(), options);
  return outcome;
}

template <class T>
PoissonOutcome solve_poisson(PoissonSolver<T>& solver, const PoissonStop& stop, const PoissonPlanRequest& request,
                             const PoissonRunOptions& options) {
  return solve_poisson(solver, stop, request, load_or_calibrate(solver.context(), ProfileNeeds::jacobi(sizeof(T))), options);
}

#define ZIGGURAT_AUTOMATIC_POISSON(T)                                                                                  \
  template PoissonOutcome solve_poisson(PoissonSolver<T>&, const PoissonStop&, const PoissonPlanRequest&,               \
                                        const DeviceProfile&, const PoissonRunOptions&);                                \
  template PoissonOutcome solve_poisson(PoissonSolver<T>&, const PoissonStop&, const PoissonPlanRequest&,               \
                                        const PoissonRunOptions&);
ZIGGURAT_AUTOMATIC_POISSON(float)
ZIGGURAT_AUTOMATIC_POISSON(double)
#undef ZIGGURAT_AUTOMATIC_POISSON

}  // namespace ziggurat
