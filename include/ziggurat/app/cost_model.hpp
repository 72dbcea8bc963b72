#pragma once
// What `ziggurat model --json` and ziggurat.model() say of the cost model's constants and plans:
// one to_json each, the rest of a report (the grid, the budget) added by each.

#include <nlohmann/json.hpp>

#include "ziggurat/tuning/cost_model.hpp"

namespace ziggurat::app {

/// upload, download, rect_upload, rect_download (each latency_ns and ns_per_value), tau_a_ns,
/// launch_ns, engines and rect_engines (overlap_compute, duplex, upload_slowdown,
/// download_slowdown, compute_slowdown).
nlohmann::json to_json(const model::DeviceConstants& constants);

/// decomposition, height, task_extent, buffer_extent, tasks_per_pass, passes, predicted_s,
/// ns_per_node, trivial_ns_per_node, speedup_over_trivial, paper_formula_ns_per_node.
nlohmann::json to_json(const model::Plan& plan);

}  // namespace ziggurat::app
