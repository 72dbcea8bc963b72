#pragma once
// What the heat and Poisson commands share about the blocked kernels: the tuner's choice in a
// run's JSON summary (--depth is read by parse_auto_count(), format.hpp).

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "ziggurat/tuning/blocking_autotune.hpp"

namespace ziggurat::cli {

/// {"key", "measured_now", "ns_per_node": {candidate: ns, ...}}.
nlohmann::json blocking_json(const BlockingChoice& choice);

}  // namespace ziggurat::cli
