#include "outcome_json.hpp"

#include "blocking_options.hpp"

namespace ziggurat::cli {

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

nlohmann::json heat_outcome_json(const std::string& mode, const HeatOutcome& outcome, const std::string& profile_origin) {
  const model::Plan& plan = outcome.planned.predicted;
  const HeatRun& run = outcome.run;
  nlohmann::json j = {
      {"plan", plan_json(mode, plan, plan.prediction.tasks, plan.prediction.passes, outcome.planned.depth,
                         outcome.planned.group, outcome.planned.schedule)},
      {"budget_bytes", outcome.planned.budget_bytes},
      {"device_bytes", run.device_bytes},
      {"pinned_host_memory", run.pinned_host_memory},
      {"profile", profile_origin},
      {"time_s", run.seconds},
      {"predicted_s", plan.prediction.total_ns * 1e-9},
      {"nodes_per_s", run.ns_per_node > 0 ? 1e9 / run.ns_per_node : 0.0},
      {"ns_per_node", run.ns_per_node},
      {"predicted_ns_per_node", plan.prediction.ns_per_node}};
  j["plan"]["kernel_ns_per_node"] = outcome.planned.kernel_ns_per_node;
  j["plan"]["kernel_rate"] = outcome.planned.kernel_rate;
  if (outcome.depth_choice) j["depth_tuning"] = blocking_json(*outcome.depth_choice);
  if (!outcome.depth_plans.empty()) {
    j["depth_plans"] = nlohmann::json::array();
    for (const DepthPlan& d : outcome.depth_plans)
      j["depth_plans"].push_back({{"candidate", d.candidate}, {"height", d.height}, {"predicted_s", d.predicted_s}});
  }
  return j;
}

nlohmann::json poisson_outcome_json(const std::string& mode, const PoissonOutcome& outcome,
                                    const std::vector<std::size_t>& extents, const std::string& profile_origin) {
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
      {"profile", profile_origin},
      {"time_s", run.seconds},
      {"predicted_s", plan.prediction.ns_per_node * 1e-9 * interior * static_cast<double>(run.sweeps)},
      {"ns_per_node_sweep", run.ns_per_node},
      {"predicted_ns_per_node_sweep", plan.prediction.ns_per_node},
      {"paper_eq2_ns_per_node_sweep", outcome.planned.paper_ns_per_sweep / interior}};
  if (outcome.depth_choice) j["depth_tuning"] = blocking_json(*outcome.depth_choice);
  return j;
}

}  // namespace ziggurat::cli
