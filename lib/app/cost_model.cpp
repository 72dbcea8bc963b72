#include "ziggurat/app/cost_model.hpp"

namespace ziggurat::app {

namespace {

nlohmann::json transfer_json(const model::TransferCost& cost) {
  return {{"latency_ns", cost.latency_ns}, {"ns_per_value", cost.ns_per_value}};
}

nlohmann::json engines_json(const model::TransferEngines& e) {
  return {{"overlap_compute", e.overlap_compute},
          {"duplex", e.duplex},
          {"upload_slowdown", e.upload_slowdown},
          {"download_slowdown", e.download_slowdown},
          {"compute_slowdown", e.compute_slowdown}};
}

}  // namespace

nlohmann::json to_json(const model::DeviceConstants& k) {
  return {{"upload", transfer_json(k.upload)},
          {"download", transfer_json(k.download)},
          {"rect_upload", transfer_json(k.rect_upload)},
          {"rect_download", transfer_json(k.rect_download)},
          {"tau_a_ns", k.tau_a_ns},
          {"launch_ns", k.launch_ns},
          {"engines", engines_json(k.engines)},
          {"rect_engines", engines_json(k.rect_engines)}};
}

nlohmann::json to_json(const model::Plan& plan) {
  return {{"decomposition", to_string(plan.layout.decomposition)},
          {"height", plan.layout.height},
          {"task_extent", plan.layout.task_extent},
          {"buffer_extent", plan.buffer_extent},
          {"tasks_per_pass", plan.prediction.tasks},
          {"passes", plan.prediction.passes},
          {"predicted_s", plan.prediction.total_ns * 1e-9},
          {"ns_per_node", plan.prediction.ns_per_node},
          {"trivial_ns_per_node", plan.trivial.ns_per_node},
          {"speedup_over_trivial", plan.speedup_over_trivial()},
          {"paper_formula_ns_per_node", plan.approx_ns_per_node}};
}

}  // namespace ziggurat::app
