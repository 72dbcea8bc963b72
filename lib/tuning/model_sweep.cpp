#include "ziggurat/tuning/model_sweep.hpp"

#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::model {

std::vector<SweepPoint> sweep_plans(const Problem& problem, const DeviceConstants& constants,
                                    const std::vector<std::uint64_t>& budgets,
                                    const std::vector<Decomposition>& decompositions, const std::vector<double>& ratios,
                                    Schedule schedule, std::optional<std::size_t> height) {
  std::vector<SweepPoint> points;
  for (const std::uint64_t budget : budgets)
    for (const Decomposition decomposition : decompositions)
      for (const double ratio : ratios) points.push_back({budget, ratio, decomposition, std::nullopt, {}});
  // Plans are independent: one a point, on every core.
  detail::parallel_for(points.size(), 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) {
      SweepPoint& point = points[i];
      DeviceConstants k = constants;
      k.set_tau_c(point.tau_c_over_tau_a * k.tau_a_ns);
      try {
        point.plan = best_plan(problem, paper_budget(point.budget_bytes, schedule), k, schedule, point.decomposition,
                               height);
      } catch (const InvalidArgument& error) {
        point.error = error.what();
      }
    }
  });
  return points;
}

}  // namespace ziggurat::model
