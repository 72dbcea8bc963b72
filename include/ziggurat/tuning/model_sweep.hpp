#pragma once
// The cost model's best plans over a table of transfer costs, device-memory budgets and
// decompositions (`ziggurat model --sweep`): how much the pyramid gains over the trivial algorithm
// as transfers grow dearer than computing, for each budget.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ziggurat/tuning/cost_model.hpp"

namespace ziggurat::model {

/// One point of a sweep: where it lies, and the best plan there or why there is none.
struct SweepPoint {
  std::uint64_t budget_bytes = 0;
  double tau_c_over_tau_a = 0;
  Decomposition decomposition = Decomposition::strip;
  std::optional<Plan> plan;
  std::string error;  ///< without a plan: why none (InvalidArgument's message, e.g. no pyramid fits)
};

/// The best plan (best_plan()) at every point of budgets x decompositions x ratios, in that order
/// (the ratios fastest): `constants` with every transfer at ratio x tau_a per value
/// (DeviceConstants::set_tau_c()), the budget counted as the paper counts it (paper_budget()),
/// `height` fixed or chosen. The points are planned on every core; each is independent of the
/// others, so the result does not depend on the number of cores.
std::vector<SweepPoint> sweep_plans(const Problem& problem, const DeviceConstants& constants,
                                    const std::vector<std::uint64_t>& budgets,
                                    const std::vector<Decomposition>& decompositions, const std::vector<double>& ratios,
                                    Schedule schedule, std::optional<std::size_t> height = std::nullopt);

}  // namespace ziggurat::model
