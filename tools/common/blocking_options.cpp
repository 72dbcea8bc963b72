#include "blocking_options.hpp"

namespace ziggurat::cli {

nlohmann::json blocking_json(const BlockingChoice& choice) {
  nlohmann::json candidates = nlohmann::json::object();
  for (const auto& [name, seconds] : choice.seconds) candidates[name] = seconds * 1e9;
  return {{"key", choice.key}, {"measured_now", choice.measured_now}, {"ns_per_node", candidates}};
}

}  // namespace ziggurat::cli
