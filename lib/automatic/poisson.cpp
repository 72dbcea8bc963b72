#include "ziggurat/automatic/poisson.hpp"

#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat {

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
