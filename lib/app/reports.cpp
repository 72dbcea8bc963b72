#include "ziggurat/app/reports.hpp"

namespace ziggurat::app {

namespace {

nlohmann::json plan_json(const std::string& mode, const model::Plan& plan, std::size_t tasks, std::size_t passes,
                         std::size_t depth, const BlockedGroup& group, Schedule schedule) {
  return {{"mode", mode},
          {"decomposition", to_string(plan.layout.decomposition)},
          {"height", plan.layout.height},
          {"task_extent", plan.layout.task_extent},
          {"buffer_extent", plan.buffer_extent},
          {"tasks", tasks},
          {"passes", passes},
          {"depth", depth},
          {"group", to_string(group)},
          {"schedule", to_string(schedule)}};
}

}  // namespace

nlohmann::json to_json(const BlockingChoice& choice) {
  nlohmann::json candidates = nlohmann::json::object();
  for (const auto& [name, seconds] : choice.seconds) candidates[name] = seconds * 1e9;
  return {{"key", choice.key}, {"measured_now", choice.measured_now}, {"ns_per_node", candidates}};
}

nlohmann::json to_json(const HeatProgress& p) {
  return {{"passes_done", p.passes_done},
          {"passes", p.passes},
          {"steps_done", p.steps_done},
          {"steps", p.steps},
          {"time_s", p.seconds},
          {"nodes_per_s", p.nodes_per_second},
          {"eta_s", p.eta_seconds}};
}

nlohmann::json to_json(const PoissonProgress& p) {
  return {{"sweeps_done", p.sweeps_done},
          {"max_sweeps", p.max_sweeps},
          {"update", p.update},
          {"time_s", p.seconds},
          {"eta_s", p.eta_seconds}};
}

nlohmann::json to_json(const HeatOutcome& outcome, const std::string& mode, const std::string& profile) {
  const model::Plan& plan = outcome.planned.predicted;
  const HeatRun& run = outcome.run;
  nlohmann::json j = {
      {"plan", plan_json(mode, plan, plan.prediction.tasks, plan.prediction.passes, outcome.planned.depth,
                         outcome.planned.group, outcome.planned.schedule)},
      {"budget_bytes", outcome.planned.budget_bytes},
      {"device_bytes", run.device_bytes},
      {"pinned_host_memory", run.pinned_host_memory},
      {"profile", profile},
      {"time_s", run.seconds},
      {"predicted_s", plan.prediction.total_ns * 1e-9},
      {"nodes_per_s", run.ns_per_node > 0 ? 1e9 / run.ns_per_node : 0.0},
      {"ns_per_node", run.ns_per_node},
      {"predicted_ns_per_node", plan.prediction.ns_per_node}};
  j["plan"]["kernel_ns_per_node"] = outcome.planned.kernel_ns_per_node;
  j["plan"]["kernel_rate"] = outcome.planned.kernel_rate;
  if (outcome.depth_choice) j["depth_tuning"] = to_json(*outcome.depth_choice);
  if (!outcome.depth_plans.empty()) {
    j["depth_plans"] = nlohmann::json::array();
    for (const DepthPlan& d : outcome.depth_plans)
      j["depth_plans"].push_back({{"candidate", d.candidate}, {"height", d.height}, {"predicted_s", d.predicted_s}});
  }
  return j;
}

nlohmann::json to_json(const PoissonOutcome& outcome, const std::string& mode, const std::vector<std::size_t>& extents,
                       const std::string& profile) {
  const model::Plan& plan = outcome.planned.predicted;
  const PoissonRun& run = outcome.run;
  const double interior = model::Problem{extents, 1}.interior_nodes();
  nlohmann::json j = {
      {"reason", to_string(run.reason)},
      {"sweeps", run.sweeps},
      {"update", run.update},
      {"plan", plan_json(mode, plan, run.tasks, run.passes, outcome.planned.depth, outcome.planned.group,
                         outcome.planned.schedule)},
      {"budget_bytes", outcome.planned.budget_bytes},
      {"device_bytes", run.device_bytes},
      {"pinned_host_memory", run.pinned_host_memory},
      {"profile", profile},
      {"time_s", run.seconds},
      {"predicted_s", plan.prediction.ns_per_node * 1e-9 * interior * static_cast<double>(run.sweeps)},
      {"ns_per_node_sweep", run.ns_per_node},
      {"predicted_ns_per_node_sweep", plan.prediction.ns_per_node},
      {"paper_eq2_ns_per_node_sweep", outcome.planned.paper_ns_per_sweep / interior}};
  if (outcome.depth_choice) j["depth_tuning"] = to_json(*outcome.depth_choice);
  return j;
}

nlohmann::json to_json(const sparse::SolveReport& report, bool histories) {
  nlohmann::json vectors = nlohmann::json::array();
  for (const sparse::VectorReport& v : report.vectors) {
    nlohmann::json j = {{"status", sparse::to_string(v.status)},
                        {"reason", v.reason},
                        {"iterations", v.iterations},
                        {"relative_residual", v.relative_residual},
                        {"recurrence_residual", v.recurrence_residual}};
    if (histories) j["history"] = v.history;
    vectors.push_back(std::move(j));
  }
  const sparse::SolveTimes& t = report.times;
  return {{"converged", report.converged},
          {"status", sparse::to_string(report.status)},
          {"reason", report.reason},
          {"iterations", report.iterations},
          {"relative_residual", report.relative_residual},
          {"vectors", std::move(vectors)},
          {"times",
           {{"setup_s", t.setup},
            {"ordering_s", t.ordering},
            {"preconditioner_setup_s", t.preconditioner_setup},
            {"host_factorization_s", t.host_factorization},
            {"factorization_s", t.factorization},
            {"products_s", t.products},
            {"preconditioner_s", t.preconditioner},
            {"vector_ops_s", t.vector_ops},
            {"deflation_s", t.deflation},
            {"solve_s", t.solve},
            {"device_timed", t.device_timed}}},
          {"ordering", report.ordering},
          {"lower_levels", report.lower_levels},
          {"upper_levels", report.upper_levels},
          {"colours", report.colours},
          {"sweep", report.sweep},
          {"lower_jacobi_sweeps", report.lower_jacobi_sweeps},
          {"upper_jacobi_sweeps", report.upper_jacobi_sweeps},
          {"fill", report.fill},
          {"matched_rows", report.matched_rows},
          {"replaced_pivots", report.replaced_pivots},
          {"product_kernel", report.product_kernel}};
}

}  // namespace ziggurat::app
