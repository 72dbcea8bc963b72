#pragma once
// What `ziggurat heat|poisson|solve --json` say of what a run did, and what ziggurat.heat(),
// ziggurat.poisson() and ziggurat.solve() return as their reports: one to_json a result struct for
// both, the rest of a report (the device, the grid) added by each.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/automatic/poisson.hpp"
#include "ziggurat/solver/krylov.hpp"
#include "ziggurat/tuning/blocking_autotune.hpp"

namespace ziggurat::app {

/// plan (mode as asked, decomposition, height, task and buffer extents, tasks, passes, depth,
/// group, schedule, kernel_ns_per_node and kernel_rate: the kernels' time the model charged and
/// where it came from), budget_bytes, device_bytes, pinned_host_memory, profile (its origin),
/// time_s, predicted_s, nodes_per_s, ns_per_node, predicted_ns_per_node, and when the depth was
/// tuned depth_tuning and depth_plans (each tuned depth's candidate, height and predicted_s).
/// `mode`: the mode as asked; `profile`: where the profile came from (RunProfile::origin).
nlohmann::json to_json(const HeatOutcome& outcome, const std::string& mode, const std::string& profile);

/// reason, sweeps, update, plan (as heat's, tasks and passes as run), budget_bytes, device_bytes,
/// pinned_host_memory, profile, time_s, predicted_s, ns_per_node_sweep,
/// predicted_ns_per_node_sweep, paper_eq2_ns_per_node_sweep, and depth_tuning when tuned.
/// `extents`: the grid's, fastest first.
nlohmann::json to_json(const PoissonOutcome& outcome, const std::string& mode, const std::vector<std::size_t>& extents,
                       const std::string& profile);

/// converged, status, reason, iterations, relative_residual, vectors (each right-hand side's
/// status, reason, iterations, relative_residual, recurrence_residual, and its history when
/// `histories`), times (setup_s, ordering_s, preconditioner_setup_s, host_factorization_s,
/// factorization_s, products_s, preconditioner_s, vector_ops_s, deflation_s, solve_s,
/// device_timed), ordering, lower_levels, upper_levels, colours, sweep, fill, matched_rows,
/// replaced_pivots, product_kernel.
nlohmann::json to_json(const sparse::SolveReport& report, bool histories);

/// What ziggurat.heat() tells its progress callback after each pass: passes_done, passes,
/// steps_done, steps, seconds, nodes_per_second, eta_seconds.
nlohmann::json to_json(const HeatProgress& progress);

/// What ziggurat.poisson() tells its progress callback: sweeps_done, max_sweeps, update, seconds,
/// eta_seconds.
nlohmann::json to_json(const PoissonProgress& progress);

/// The tuner's choice of the blocked kernels' launch depth: key, measured_now, ns_per_node
/// ({candidate: ns, ...}).
nlohmann::json to_json(const BlockingChoice& choice);

}  // namespace ziggurat::app
