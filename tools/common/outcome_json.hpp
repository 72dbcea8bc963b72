#pragma once
// What `ziggurat heat|poisson|solve --json` say of what a run did, and what ziggurat.heat(),
// ziggurat.poisson() and ziggurat.solve() return as their reports: one builder for both.

#include <nlohmann/json.hpp>
#include <string>

#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/automatic/poisson.hpp"
#include "ziggurat/solver/krylov.hpp"

namespace ziggurat::cli {

/// plan (mode as asked, decomposition, height, task and buffer extents, tasks, passes, depth,
/// group, schedule, kernel_ns_per_node and kernel_rate: the kernels' time the model charged and
/// where it came from), budget_bytes, device_bytes, pinned_host_memory, profile (its origin),
/// time_s, predicted_s, nodes_per_s, ns_per_node, predicted_ns_per_node, and when the depth was
/// tuned depth_tuning and depth_plans (each tuned depth's candidate, height and predicted_s).
nlohmann::json heat_outcome_json(const std::string& mode, const HeatOutcome& outcome, const std::string& profile_origin);

/// reason, sweeps, update, plan (as heat's, tasks and passes as run), budget_bytes, device_bytes,
/// pinned_host_memory, profile, time_s, predicted_s, ns_per_node_sweep,
/// predicted_ns_per_node_sweep, paper_eq2_ns_per_node_sweep, and depth_tuning when tuned.
/// `extents`: the grid's, fastest first.
nlohmann::json poisson_outcome_json(const std::string& mode, const PoissonOutcome& outcome,
                                    const std::vector<std::size_t>& extents, const std::string& profile_origin);

/// converged, status, reason, iterations, relative_residual, vectors (each right-hand side's
/// status, reason, iterations, relative_residual, recurrence_residual, and its history when
/// `histories`), times (setup_s, ordering_s, preconditioner_setup_s, factorization_s, products_s,
/// preconditioner_s, vector_ops_s, deflation_s, solve_s, device_timed), lower_levels,
/// upper_levels, colours, sweep, product_kernel.
nlohmann::json solve_report_json(const sparse::SolveReport& report, bool histories);

}  // namespace ziggurat::cli
